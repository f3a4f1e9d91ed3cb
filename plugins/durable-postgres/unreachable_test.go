package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/durable"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/pluginkittest"
)

// A database that cannot be reached never holds up the handshake (the
// store opens on the first domain call), and every domain call answers
// -32304 with retryable true within the connect timeout instead of
// hanging; health says why; the DSN's password never reaches the log or
// the wire. Refused (nothing listens) and silent (accepts, never answers).
func TestUnreachableDatabaseAnswers32304(t *testing.T) {
	const password = "Sup3r-Secret-Pw"
	for _, tt := range []struct {
		name string
		addr func(t *testing.T) string
	}{
		{"refused", func(t *testing.T) string { return pgtest.ClosedAddr(t) }},
		{"silent", func(t *testing.T) string { addr, _ := pgtest.SilentServer(t); return addr }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{
				"ANIMUS_DURABLE_PG_DSN":                "postgres://animus:" + password + "@" + tt.addr(t) + "/animus?sslmode=disable",
				"ANIMUS_DURABLE_PG_CONNECT_TIMEOUT_MS": "300",
			}
			p := newPlugin(func(k string) string { return env[k] })
			if err := p.Preflight(context.Background()); err != nil {
				t.Fatalf("preflight: %v", err)
			}
			h := pluginkittest.Start(t, p)
			done := make(chan struct{})
			go func() { // a hang detector, not a speed target
				defer close(done)
				if _, err := h.Handshake(pluginkittest.Handshake{InitExtensions: json.RawMessage(
					`{"project_binding":{"project_root":"` + t.TempDir() + `","repo_scope":"x"}}`)}); err != nil {
					t.Errorf("initialize: %v", err)
					return
				}
				e := h.Fails(t, "durable/begin_workflow_run", map[string]any{"run_id": "r", "phase_id": "p"},
					durable.CodeBackendUnavailable, pluginkit.CategoryUnavailable)
				if e.Data["retryable"] != true || strings.Contains(e.Message, password) {
					t.Errorf("answer %+v: want retryable true and no password", e)
				}
				var health struct {
					Status    string `json:"status"`
					LastError string `json:"last_error"`
				}
				h.OK(t, "health/check", nil, &health)
				if health.Status != "unhealthy" || strings.Contains(health.LastError, password) {
					t.Errorf("health %+v, want unhealthy without the password", health)
				}
			}()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the plugin hung on an unreachable database")
			}
			if log := h.PluginLog(); strings.Contains(log, password) {
				t.Errorf("the password reached the log:\n%s", log)
			}
		})
	}
}
