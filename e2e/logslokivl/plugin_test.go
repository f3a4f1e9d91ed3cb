package logslokivl

import (
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
	"github.com/animus-plugins/animus-plugins/e2e/victorialogs"
)

const binaryName = "animus-logs-loki"

// TestPluginPushLandsInVictoriaLogs runs the plugin binary as the daemon
// does (narrow env allowlist plus the declared LOKI_* names) with LOKI_URL
// pointing at VictoriaLogs' Loki endpoint, stores entries in two calls (a
// batch of three streams, then the daemon's single entry), and reads the
// rows back through LogsQL for every push encoding and for structured
// metadata on and off.
func TestPluginPushLandsInVictoriaLogs(t *testing.T) {
	vl := victorialogs.FromEnv(t)
	meter := newPushMeter(t, vl)
	for _, c := range []struct {
		name string
		env  map[string]string // beyond LOKI_URL and LOKI_TENANT_ID
		m    mapping
		want victorialogs.PushCounts // for the two store calls
	}{
		{"protobuf+snappy", map[string]string{"LOKI_PUSH_ENCODING": "protobuf", "LOKI_EXTRA_LABELS": "env=e2e,region=local"},
			mapping{serviceName: "animus", extra: map[string]string{"env": "e2e", "region": "local"}, sm: true},
			victorialogs.PushCounts{Protobuf: 2}},
		{"json+gzip", map[string]string{"LOKI_PUSH_ENCODING": "json", "LOKI_SERVICE_NAME": "animus-e2e", "LOKI_EXTRA_LABELS": "env=e2e"},
			mapping{serviceName: "animus-e2e", extra: map[string]string{"env": "e2e"}, sm: true},
			victorialogs.PushCounts{JSON: 2}},
		{"default encoding, structured metadata on", map[string]string{"LOKI_STRUCTURED_METADATA": "on"},
			mapping{serviceName: "animus", sm: true},
			victorialogs.PushCounts{Protobuf: 2}},
		{"json, structured metadata off", map[string]string{"LOKI_PUSH_ENCODING": "json", "LOKI_STRUCTURED_METADATA": "off"},
			mapping{serviceName: "animus"},
			victorialogs.PushCounts{JSON: 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := e2etest.Ctx(t, 60*time.Second)
			tenant := victorialogs.NewTenant()
			env := map[string]string{"LOKI_URL": vl.LokiURL(), "LOKI_TENANT_ID": tenant.OrgID()}
			for k, v := range c.env {
				env[k] = v
			}
			h := e2etest.SpawnContext(t, ctx, binaryName, e2etest.Options{EnvMode: fakehost.EnvDaemonNarrow, Env: env})
			base := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
			entries := sampleEntries(runID(), base)
			store(t, h, entries[:3])
			store(t, h, entries[3:])

			rows, err := vl.WaitRows(ctx, tenant, "*", base.Add(-time.Hour), base.Add(time.Hour), len(entries))
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, c.m, entries, rows)
			if got := meter.delta(t); got != c.want {
				t.Errorf("push counters moved by %+v, want %+v (one push per store call, in the configured encoding)", got, c.want)
			}
			if rep, err := h.Shutdown(ctx, fakehost.LadderDaemon); err != nil || !rep.ExitedByItself {
				t.Errorf("shutdown: %+v %v", rep, err)
			}
		})
	}
}

// store calls log_storage/store and requires {"stored": len(entries)}.
func store(t *testing.T, h *fakehost.Host, entries []logEntry) {
	t.Helper()
	raw := e2etest.Call(t, h, "log_storage/store", map[string]any{"entries": entries})
	if got := e2etest.Decode[struct {
		Stored *int `json:"stored"`
	}](t, raw); got.Stored == nil || *got.Stored != len(entries) {
		t.Fatalf("store result %s, want {\"stored\":%d}", raw, len(entries))
	}
}
