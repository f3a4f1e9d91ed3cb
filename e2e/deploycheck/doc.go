// Package deploycheck checks the deployment files under deploy/ that no
// test here can run (there is no Docker engine on these machines):
// deploy/loki's docker-compose.yml and loki-config.yaml are parsed and held
// to what animus-logs-loki needs from a Grafana Loki 3 — single binary,
// filesystem storage, TSDB index with schema v13, structured metadata
// allowed, auth_enabled (so X-Scope-OrgID is exercised), query limits no
// tighter than the plugin's — and every file the compose file mounts must
// exist. Each check is also run on a broken copy, so a check that cannot
// fail is caught.
package deploycheck
