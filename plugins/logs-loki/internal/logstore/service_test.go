package logstore

import (
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/config"
)

// TestSchema: log_storage/schema is truthful and agrees with the
// advertised methods (the conformance schema-health scenario): windows and
// retention are milliseconds, retention only when configured.
func TestSchema(t *testing.T) {
	for _, c := range []struct {
		name string
		env  []string
		want string
	}{
		{"defaults", nil,
			`{"supports_query":true,"supports_tail":true,"supports_dedup":true,"supports_filtering":{"by_level":true,"by_source":true,"by_target":true,"by_time_range":true,"by_glob":true},"max_query_window":2592000000}`},
		{"window and retention configured", []string{config.EnvMaxQueryWindow, "24h", config.EnvRetentionHint, "2w"},
			`{"supports_query":true,"supports_tail":true,"supports_dedup":true,"supports_filtering":{"by_level":true,"by_source":true,"by_target":true,"by_time_range":true,"by_glob":true},"max_query_window":86400000,"retention_hint":1209600000}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := serve(t, New(testConfig(t, "", c.env...)))
			if got := string(h.kit.OK(h.t, "log_storage/schema", nil, nil)); got != c.want {
				t.Fatalf("schema\n got %s\nwant %s", got, c.want)
			}
			var schema Schema
			h.kit.OK(h.t, "log_storage/schema", `{}`, &schema)
			var res struct {
				PluginInfo struct {
					Kind string `json:"plugin_kind"`
				} `json:"plugin_info"`
				Capabilities struct {
					Methods   []string `json:"methods"`
					Streaming bool     `json:"streaming"`
				} `json:"capabilities"`
			}
			if err := json.Unmarshal(h.init, &res); err != nil {
				t.Fatal(err)
			}
			m := res.Capabilities.Methods
			if res.PluginInfo.Kind != "log_storage_backend" ||
				schema.SupportsQuery != slices.Contains(m, "log_storage/query") ||
				schema.SupportsTail != slices.Contains(m, "log_storage/tail") ||
				res.Capabilities.Streaming != schema.SupportsTail ||
				!slices.Contains(m, "log_storage/store") || !slices.Contains(m, "log_storage/schema") || !slices.Contains(m, "health/check") {
				t.Fatalf("initialize %s disagrees with schema %+v", h.init, schema)
			}
		})
	}
}

// TestTLS: an https Loki whose certificate is not trusted is reported as
// such (never as a generic failure); LOKI_CA_FILE makes it trusted.
func TestTLS(t *testing.T) {
	loki := fakeloki.New(t, fakeloki.Options{TLS: true})
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: loki.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}

	untrusted := serve(t, New(testConfig(t, loki.URL())))
	e := untrusted.kit.Fails(untrusted.t, "log_storage/query", `{}`, pluginkit.CodeInternalError, pluginkit.CategoryUnavailable)
	if e.Message != "backend unavailable: query: Loki TLS certificate not trusted (LOKI_CA_FILE)" {
		t.Fatalf("untrusted: %q", e.Message)
	}
	var health healthResult
	untrusted.kit.OK(untrusted.t, "health/check", nil, &health)
	if health.Status != "unhealthy" || health.LastError != "Loki unreachable: TLS certificate not trusted (LOKI_CA_FILE)" {
		t.Fatalf("untrusted health %+v", health)
	}

	trusted := serve(t, New(testConfig(t, loki.URL(), config.EnvCAFile, ca)))
	if res := string(trusted.kit.OK(trusted.t, "log_storage/query", `{}`, nil)); res != `{"entries":[]}` {
		t.Fatalf("trusted query %s", res)
	}
	trusted.kit.OK(trusted.t, "health/check", nil, &health)
	if health.Status != "healthy" {
		t.Fatalf("trusted health %+v", health)
	}
}

// TestCredentialsReachLoki: tenant and credentials from the configuration
// go with every request (push, query, websocket upgrade, readiness), so a
// gateway can authorise them; a Loki that requires them serves the plugin.
func TestCredentialsReachLoki(t *testing.T) {
	for _, c := range []struct {
		name string
		loki fakeloki.Options
		env  []string
		want string // Authorization header
	}{
		{"basic", fakeloki.Options{RequireTenant: true, BasicAuthUser: "12345", BasicAuthPassword: "glc_secret"},
			[]string{config.EnvUsername, "12345", config.EnvPassword, "glc_secret"}, "Basic MTIzNDU6Z2xjX3NlY3JldA=="},
		{"bearer", fakeloki.Options{RequireTenant: true, BearerToken: "tok-abcdef"},
			[]string{config.EnvBearerToken, "tok-abcdef"}, "Bearer tok-abcdef"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := fakeloki.New(t, c.loki)
			h := serve(t, New(testConfig(t, f.URL(), append(c.env, config.EnvTenantID, "team-a")...)))
			h.kit.OK(h.t, "log_storage/store", storeParams(t, wireEntryOf("e", base(), "info", "cli", "", "cli", "")), nil)
			h.awaitEvents(h.start("log_storage/tail", map[string]any{"follow": true}), 1)
			h.kit.OK(h.t, "health/check", nil, nil)
			for _, p := range []string{pushPath, queryPath, tailPath, readyPath} {
				if got := f.LastHeader(p).Get("X-Scope-OrgID") + " " + f.LastHeader(p).Get("Authorization"); got != "team-a "+c.want {
					t.Errorf("%s carried %q", p, got)
				}
			}
		})
	}
}
