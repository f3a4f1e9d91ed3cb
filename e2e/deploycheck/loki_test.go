package deploycheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
)

func lokiDir(t *testing.T) string {
	t.Helper()
	root, err := binaries.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "deploy", "loki")
}

// TestLokiDeployment: the shipped files pass every check, and the README
// gives the commands an operator runs.
func TestLokiDeployment(t *testing.T) {
	dir := lokiDir(t)
	for _, p := range CheckLoki(dir) {
		t.Error(p)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"docker compose -f deploy/loki/docker-compose.yml up -d",
		"LOKI_URL=http://127.0.0.1:3100 LOKI_TENANT_ID=animus make e2e-loki",
	} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("deploy/loki/README.md lacks %q", want)
		}
	}
}

// TestLokiChecksCatchMistakes runs the checks on broken copies of the
// shipped files: each breakage must be reported.
func TestLokiChecksCatchMistakes(t *testing.T) {
	src := lokiDir(t)
	for _, c := range []struct {
		name       string
		file       string
		old, new   string // "" new with "" old: delete the file
		wantInProb string
	}{
		{"auth disabled", "loki-config.yaml", "auth_enabled: true", "auth_enabled: false", "auth_enabled"},
		{"old schema", "loki-config.yaml", "schema: v13", "schema: v12", "v13"},
		{"boltdb index", "loki-config.yaml", "store: tsdb", "store: boltdb-shipper", "tsdb"},
		{"no structured metadata", "loki-config.yaml", "allow_structured_metadata: true", "allow_structured_metadata: false", "allow_structured_metadata"},
		{"short query window", "loki-config.yaml", "max_query_length: 721h", "max_query_length: 24h", "max_query_length"},
		{"small query limit", "loki-config.yaml", "max_entries_limit_per_query: 5000", "max_entries_limit_per_query: 1000", "max_entries_limit_per_query"},
		{"retention without delete store", "loki-config.yaml", "delete_request_store: filesystem", "", "delete_request_store"},
		{"chunks off the volume", "loki-config.yaml", "chunks_directory: /loki/chunks", "chunks_directory: /tmp/chunks", "not on a mounted volume"},
		{"config file missing", "loki-config.yaml", "", "", "does not exist"},
		{"Loki 2 image", "docker-compose.yml", "grafana/loki:3.5.3", "grafana/loki:2.9.0", "Loki 3"},
		{"floating tag", "docker-compose.yml", "grafana/loki:3.5.3", "grafana/loki:latest", "pinned"},
		{"microservices target", "docker-compose.yml", "- -target=all", "- -target=read", "single binary"},
		{"port on all interfaces", "docker-compose.yml", `"127.0.0.1:3100:3100"`, `"3100:3100"`, "127.0.0.1:3100:3100"},
		{"undeclared volume", "docker-compose.yml", "volumes:\n  loki-data:\n", "", "not declared"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range []string{"docker-compose.yml", "loki-config.yaml"} {
				b, err := os.ReadFile(filepath.Join(src, f))
				if err != nil {
					t.Fatal(err)
				}
				if f == c.file {
					if c.old == "" {
						continue // deleted
					}
					s := string(b)
					if !strings.Contains(s, c.old) {
						t.Fatalf("%s no longer contains %q; update this case", f, c.old)
					}
					b = []byte(strings.Replace(s, c.old, c.new, 1))
				}
				if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			problems := CheckLoki(dir)
			for _, p := range problems {
				if strings.Contains(p, c.wantInProb) {
					return
				}
			}
			t.Errorf("no problem mentioning %q; got %q", c.wantInProb, problems)
		})
	}
}
