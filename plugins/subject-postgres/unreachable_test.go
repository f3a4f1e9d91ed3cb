package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/pluginkittest"
)

// A database that cannot be reached never holds up the handshake (the
// store opens on the first domain call); every domain call, watch
// included, answers -32603 unavailable within the connect timeout instead
// of hanging; health says why; the DSN's password never reaches the log or
// the wire. Refused (nothing listens) and silent (accepts, never answers).
func TestUnreachableDatabaseIsUnavailable(t *testing.T) {
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
				"ANIMUS_SUBJECT_PG_DSN":                "postgres://animus:" + password + "@" + tt.addr(t) + "/animus?sslmode=disable",
				"ANIMUS_SUBJECT_PG_CONNECT_TIMEOUT_MS": "300",
			}
			p := newPlugin(func(k string) string { return env[k] })
			if err := p.Preflight(context.Background()); err != nil {
				t.Fatalf("preflight: %v", err)
			}
			h := pluginkittest.Start(t, p)
			done := make(chan struct{})
			go func() { // a hang detector, not a speed target
				defer close(done)
				if _, err := h.Initialize(nil); err != nil {
					t.Errorf("initialize: %v", err)
					return
				}
				for _, call := range []struct {
					method string
					params any
				}{
					{"task/list", nil},
					{"task/create", map[string]any{"title": "t"}},
					{"subject/watch", nil},
				} {
					e := h.Fails(t, call.method, call.params, -32603, pluginkit.CategoryUnavailable)
					if e.Message != "backend unavailable: cannot reach PostgreSQL; retry" {
						t.Errorf("%s: %q", call.method, e.Message)
					}
				}
				var health struct {
					Status    string `json:"status"`
					LastError string `json:"last_error"`
				}
				h.OK(t, "health/check", nil, &health)
				if health.Status != "unhealthy" || !strings.Contains(health.LastError, "cannot reach PostgreSQL") || strings.Contains(health.LastError, password) {
					t.Errorf("health %+v, want unhealthy naming the cause without the password", health)
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
