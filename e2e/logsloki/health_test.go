package logsloki

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

type health struct {
	Status    string `json:"status"`
	LastError string `json:"last_error"`
}

func checkHealth(t testing.TB, h *fakehost.Host) health {
	t.Helper()
	var r health
	if err := json.Unmarshal(e2etest.Call(t, h, "health/check", nil), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestMissingURL: without LOKI_URL the plugin runs, is unhealthy with
// last_error, and store, query and tail answer -32603 unavailable naming
// LOKI_URL; schema still answers.
func TestMissingURL(t *testing.T) {
	// Blank, not absent: the daemon's environment of make e2e-loki has
	// LOKI_URL set.
	h := startPlugin(t, map[string]string{"LOKI_URL": ""})
	if r := checkHealth(t, h); r.Status != "unhealthy" || r.LastError != "LOKI_URL unset" {
		t.Fatalf("health %+v", r)
	}
	e := logEntry{ID: "x", TS: time.Now().UTC().Format(time.RFC3339), Level: "info", Source: "daemon", Target: "t", Message: "m"}
	for method, params := range map[string]any{
		"log_storage/store": map[string]any{"entries": []logEntry{e}},
		"log_storage/query": map[string]any{},
		"log_storage/tail":  map[string]any{"follow": true},
	} {
		wantErr(t, e2etest.Failure(t, h, method, params), -32603, "unavailable", "LOKI_URL")
	}
	e2etest.Call(t, h, "log_storage/schema", nil)
}

// TestHealthStates: healthy; /ready hidden by a gateway (404) falls back
// to the labels endpoint; 429 and 5xx degraded; bad credentials
// unhealthy; a recent failed push degraded.
func TestHealthStates(t *testing.T) {
	b := newBackend(t, fakeloki.Options{BasicAuthUser: "u", BasicAuthPassword: "p"})
	b.needFake("FailNext and auth")
	h := b.start(map[string]string{"LOKI_USERNAME": "u", "LOKI_PASSWORD": "p"})
	for _, tc := range []struct {
		name   string
		fail   []int // statuses of the next requests
		status string
		errHas string
	}{
		{"healthy", nil, "healthy", ""},
		{"gateway without /ready", []int{404}, "healthy", ""},
		{"429", []int{429}, "degraded", "429"},
		{"503", []int{503}, "degraded", "503"},
		{"401", []int{401}, "unhealthy", "credentials"},
		{"403", []int{403}, "unhealthy", "credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.fail) > 0 {
				b.fake.FailNext(len(tc.fail), tc.fail[0])
			}
			r := checkHealth(t, h)
			if r.Status != tc.status || !strings.Contains(r.LastError, tc.errHas) {
				t.Fatalf("health %+v, want %s with %q", r, tc.status, tc.errHas)
			}
		})
	}
	t.Run("wrong password", func(t *testing.T) {
		r := checkHealth(t, b.start(map[string]string{"LOKI_USERNAME": "u", "LOKI_PASSWORD": "wrong"}))
		if r.Status != "unhealthy" || strings.Contains(r.LastError, "wrong") {
			t.Fatalf("health %+v", r)
		}
	})
	t.Run("recent push failure", func(t *testing.T) {
		b.fake.FailNext(1, http.StatusTooManyRequests)
		e2etest.Failure(t, h, "log_storage/store", map[string]any{"entries": []logEntry{b.entry("f", time.Now(), "info", "daemon", "h")}})
		if r := checkHealth(t, h); r.Status != "degraded" || !strings.Contains(r.LastError, "push") {
			t.Fatalf("health %+v after a failed push", r)
		}
		store(t, h, b.entry("ok", time.Now(), "info", "daemon", "h"))
		if r := checkHealth(t, h); r.Status != "healthy" {
			t.Fatalf("health %+v after a successful push", r)
		}
	})
}

// TestSchemaTellsTheTruth: all filters, dedup, the window in ms, the
// retention hint when configured; methods and streaming match.
func TestSchemaTellsTheTruth(t *testing.T) {
	b := newBackend(t, fakeloki.Options{})
	h := fakehost.New(t, e2etest.Config(t, binary, e2etest.Options{
		Env: map[string]string{"LOKI_URL": b.env["LOKI_URL"], "LOKI_RETENTION_HINT": "7d", "LOKI_MAX_QUERY_WINDOW": "30d"}}))
	init, err := h.Initialize(e2etest.Ctx(t, 30*time.Second), fakehost.Handshake{Preset: fakehost.PresetDaemon})
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Query, Tail, Dedup bool
		Filtering          map[string]bool
		Window, Retention  *int64
	}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(e2etest.Call(t, h, "log_storage/schema", nil), &raw)
	_ = json.Unmarshal(raw["supports_query"], &s.Query)
	_ = json.Unmarshal(raw["supports_tail"], &s.Tail)
	_ = json.Unmarshal(raw["supports_dedup"], &s.Dedup)
	_ = json.Unmarshal(raw["supports_filtering"], &s.Filtering)
	_ = json.Unmarshal(raw["max_query_window"], &s.Window)
	_ = json.Unmarshal(raw["retention_hint"], &s.Retention)
	if !s.Query || !s.Tail || !s.Dedup || s.Window == nil || *s.Window != 2592000000 || s.Retention == nil || *s.Retention != 604800000 {
		t.Fatalf("schema %s", mustJSON(raw))
	}
	for _, k := range []string{"by_level", "by_source", "by_target", "by_time_range", "by_glob"} {
		if !s.Filtering[k] {
			t.Errorf("supports_filtering.%s is false", k)
		}
	}
	methods := strings.Join(init.Capabilities.Methods, " ")
	for _, m := range []string{"log_storage/store", "log_storage/schema", "health/check", "log_storage/query", "log_storage/tail"} {
		if !strings.Contains(methods, m) {
			t.Errorf("capabilities lack %s: %s", m, methods)
		}
	}
	if !init.Capabilities.Streaming || init.PluginInfo.PluginKind != "log_storage_backend" {
		t.Errorf("streaming %v, kind %s", init.Capabilities.Streaming, init.PluginInfo.PluginKind)
	}
	// Without LOKI_RETENTION_HINT the hint is omitted.
	raw = nil
	_ = json.Unmarshal(e2etest.Call(t, b.start(nil), "log_storage/schema", nil), &raw)
	if _, ok := raw["retention_hint"]; ok {
		t.Fatalf("retention_hint advertised without configuration: %s", mustJSON(raw))
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestTenancyAndAuth: X-Scope-OrgID separates tenants; basic and bearer
// auth reach a Loki behind a gateway.
func TestTenancyAndAuth(t *testing.T) {
	t.Run("tenants", func(t *testing.T) {
		b := newBackend(t, fakeloki.Options{RequireTenant: true})
		b.needFake("per-tenant counters")
		a := b.start(map[string]string{"LOKI_TENANT_ID": "team-a"})
		store(t, a, b.entry("a", time.Now(), "info", "daemon", "x"))
		if b.fake.Entries("team-a") != 1 || b.fake.Entries("fake") != 0 {
			t.Fatalf("entries: team-a %d, default %d", b.fake.Entries("team-a"), b.fake.Entries("fake"))
		}
		if got := query(t, b.start(map[string]string{"LOKI_TENANT_ID": "team-b"}), map[string]any{"source_name": b.uniq}).Entries; len(got) != 0 {
			t.Fatalf("team-b sees team-a's entries: %d", len(got))
		}
		if got := query(t, b.start(map[string]string{"LOKI_TENANT_ID": "team-a"}), map[string]any{"source_name": b.uniq}).Entries; len(got) != 1 {
			t.Fatalf("team-a sees %d of its entries", len(got))
		}
		// Without a tenant a multi-tenant Loki refuses the push (401 "no
		// org id"), which the plugin reports as a credentials problem.
		e := e2etest.Failure(t, b.start(nil), "log_storage/store", map[string]any{"entries": []logEntry{b.entry("none", time.Now(), "info", "daemon", "x")}})
		wantErr(t, e, -32603, "unavailable", "credentials")
	})
	for name, tc := range map[string]struct {
		opts fakeloki.Options
		env  map[string]string
	}{
		"basic":  {fakeloki.Options{BasicAuthUser: "123456", BasicAuthPassword: "glc_token"}, map[string]string{"LOKI_USERNAME": "123456", "LOKI_PASSWORD": "glc_token"}},
		"bearer": {fakeloki.Options{BearerToken: "s3cret"}, map[string]string{"LOKI_BEARER_TOKEN": "s3cret"}},
	} {
		t.Run(name, func(t *testing.T) {
			b := newBackend(t, tc.opts)
			b.needFake("gateway auth")
			h := b.start(tc.env)
			store(t, h, b.entry("auth", time.Now(), "info", "daemon", "x"))
			if got := query(t, h, map[string]any{"source_name": b.uniq}).Entries; len(got) != 1 {
				t.Fatalf("got %d entries", len(got))
			}
			// The websocket upgrade carries the credentials too.
			tailer := b.start(tc.env)
			id := openTail(t, tailer, map[string]any{"source_name": b.uniq, "follow": true})
			waitEvents(t, tailer, id, 1, 5*time.Second)
			store(t, h, b.entry("auth2", time.Now(), "info", "daemon", "x"))
			if got := waitEvents(t, tailer, id, 2, 5*time.Second); len(got) != 2 {
				t.Fatalf("tail delivered %d entries, want 2", len(got))
			}
			// Without credentials every call is refused.
			e := e2etest.Failure(t, b.start(nil), "log_storage/store", map[string]any{"entries": []logEntry{b.entry("anon", time.Now(), "info", "daemon", "x")}})
			wantErr(t, e, -32603, "unavailable", "credentials")
		})
	}
}

// TestStructuredMetadataFallback: a Loki that refuses structured metadata
// still stores everything in auto mode (the plugin switches to | json
// filters), and =on reports the refusal.
func TestStructuredMetadataFallback(t *testing.T) {
	b := newBackend(t, fakeloki.Options{DisallowStructuredMetadata: true})
	b.needFake("allow_structured_metadata: false")
	h := b.start(nil)
	store(t, h, b.entry("p1", time.Now().Add(-time.Second), "info", "daemon", "sm.a"), b.entry("p2", time.Now(), "info", "daemon", "sm.b"))
	if got := b.ids(query(t, h, map[string]any{"source_name": b.uniq, "target_glob": b.uniq + ".sm.b"}).Entries); !sameList(got, []string{"p2"}) {
		t.Fatalf("parser-mode query %v", got)
	}
	// A fresh process in auto mode has not seen the refusal; its reads
	// must still find entries stored without structured metadata.
	if got := b.ids(query(t, b.start(nil), map[string]any{"source_name": b.uniq, "target_glob": b.uniq + ".sm.*"}).Entries); !sameList(got, []string{"p1", "p2"}) {
		t.Fatalf("fresh auto-mode query %v", got)
	}
	off := b.start(map[string]string{"LOKI_STRUCTURED_METADATA": "off"})
	if got := b.ids(query(t, off, map[string]any{"source_name": b.uniq, "target_glob": b.uniq + ".sm.*"}).Entries); !sameList(got, []string{"p1", "p2"}) {
		t.Fatalf("off-mode query from a fresh process %v", got)
	}
	on := b.start(map[string]string{"LOKI_STRUCTURED_METADATA": "on"})
	e := e2etest.Failure(t, on, "log_storage/store", map[string]any{"entries": []logEntry{b.entry("p3", time.Now(), "info", "daemon", "sm")}})
	wantErr(t, e, -32602, "invalid_request", "structured metadata")
}
