// Package victorialogs lets e2e tests use a running VictoriaLogs as an
// independent implementation of Loki's push API: the Loki plugin pushes to
// it (POST /insert/loki/api/v1/push, so LOKI_URL = LokiURL()), and the
// test reads what was stored through VictoriaLogs' own LogsQL query API
// (/select/logsql/query, one JSON object per line), not through anything
// Loki-shaped. A second implementation keeps the plugin and e2e/fakeloki
// from agreeing on a misreading of Loki's wire format.
//
// The server is found through VICTORIALOGS_URL (scripts/victorialogs.sh
// start prints it; .ci/run and `make e2e` export it). Without it, FromEnv
// fails the test under CI=true, because CI must run these checks, and
// skips it elsewhere with a reason naming the script: never silently.
//
// How VictoriaLogs maps a Loki push (v1.52.1, app/vlinsert/loki):
//
//   - stream labels become the log stream: fields of their own and the
//     _stream field `{a="1",b="2"}` (names sorted);
//   - structured metadata becomes ordinary fields;
//   - the line becomes _msg verbatim when the server runs with
//     -loki.disableMessageParsing, as the script starts it (otherwise a
//     JSON line is unpacked into fields);
//   - the timestamp becomes _time, returned as RFC 3339 with nanoseconds;
//   - X-Scope-OrgID "A" or "A:P" selects tenant AccountID A, ProjectID P
//     (numbers only), read back with the AccountID/ProjectID headers;
//   - /metrics counts pushes per body format in
//     vl_http_requests_total{path="/insert/loki/api/v1/push",format="json"|"protobuf"},
//     which is how a test tells which encoding reached the server.
//
// Data becomes searchable after an in-memory flush; Flush forces one, and
// WaitRows polls until the expected rows are visible.
//
// Tests isolate themselves with a fresh random tenant (NewTenant) rather
// than a fresh server, so one instance serves a whole `make test`.
package victorialogs
