package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/pluginkittest"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/queue"
)

// A database that cannot be reached never holds up the handshake, and
// every domain call answers -32205 (retriable) within the connect
// timeout instead of hanging; health says why; the DSN's password never
// reaches the log. Two ways to be unreachable: nothing listens (the
// connection is refused), and something accepts but never answers the
// startup message (a dead server behind a live address).
func TestUnreachableDatabaseAnswers32205(t *testing.T) {
	const password = "Sup3r-Secret-Pw"
	tests := []struct {
		name string
		addr func(t *testing.T) string
	}{
		{"refused", func(t *testing.T) string { return pgtest.ClosedAddr(t) }},
		{"silent", func(t *testing.T) string { addr, _ := pgtest.SilentServer(t); return addr }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{
				"ANIMUS_QUEUE_PG_DSN":                "postgres://animus:" + password + "@" + tt.addr(t) + "/animus?sslmode=disable",
				"ANIMUS_QUEUE_PG_CONNECT_TIMEOUT_MS": "300",
			}
			p := newPlugin(func(k string) string { return env[k] })
			if err := p.Preflight(context.Background()); err != nil {
				t.Fatalf("preflight: %v", err)
			}
			h := pluginkittest.Start(t, p)
			// A hang detector, not a speed target: the handshake never
			// dials, each call gives up after the 300 ms connect timeout.
			done := make(chan struct{})
			go func() {
				defer close(done)
				root := t.TempDir()
				if _, err := h.Handshake(pluginkittest.Handshake{InitExtensions: json.RawMessage(
					`{"project_binding":{"project_root":"` + root + `","repo_scope":"x"}}`)}); err != nil {
					t.Errorf("initialize: %v", err)
					return
				}
				for _, method := range []string{"queue/stats", "queue/v2/lease"} {
					params := any(nil)
					if method == "queue/v2/lease" {
						params = map[string]any{"max": 1, "owner_id": "d", "workflow_ids": []string{"w"}}
					}
					e := h.Fails(t, method, params, queue.CodeLockFailed, pluginkit.CategoryUnavailable)
					if !strings.Contains(e.Message, "cannot reach PostgreSQL") {
						t.Errorf("%s: message %q does not say the database is unreachable", method, e.Message)
					}
				}
				var health struct {
					Status    string `json:"status"`
					LastError string `json:"last_error"`
				}
				h.OK(t, "health/check", nil, &health)
				if health.Status != "unhealthy" || !strings.Contains(health.LastError, "cannot reach PostgreSQL") {
					t.Errorf("health %+v, want unhealthy because PostgreSQL cannot be reached", health)
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
