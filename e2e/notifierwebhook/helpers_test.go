package notifierwebhook

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

const binaryName = "animus-notifier-webhook"

func binary(t testing.TB) string { return binaries.Path(t, binaryName) }

// project is a daemon project: a root with .animus/pm-config.json, an
// empty HOME (so no scoped pm-config applies), and the daemon's own
// environment, from which only the forwarded names reach the plugin.
type project struct {
	root      string
	home      string
	config    string            // notification_config JSON
	daemonEnv map[string]string // the daemon's environment (secrets live here)
}

func newProject(t testing.TB, config string, daemonEnv map[string]string) *project {
	t.Helper()
	p := &project{root: e2etest.Project(t), home: t.TempDir(), config: config, daemonEnv: daemonEnv}
	if config != "" {
		p.writeConfig(t, config)
	}
	return p
}

func (p *project) writeConfig(t testing.TB, config string) {
	t.Helper()
	p.config = config
	dir := filepath.Join(p.root, ".animus")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	doc := `{"project":"e2e","notification_config":` + config + `}`
	if err := os.WriteFile(filepath.Join(dir, "pm-config.json"), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
}

// forwarded reproduces the daemon's *_env forwarding
// (notifier-webhook.md §2): every string under a key ending in "_env",
// and the string values of objects or arrays under such keys, name
// variables copied from the daemon's environment.
func forwarded(config string, daemonEnv map[string]string) map[string]string {
	var doc any
	if json.Unmarshal([]byte(config), &doc) != nil {
		return nil
	}
	names := map[string]bool{}
	var walk func(v any, underEnv bool)
	walk = func(v any, underEnv bool) {
		switch x := v.(type) {
		case map[string]any:
			for k, child := range x {
				walk(child, underEnv || strings.HasSuffix(k, "_env"))
			}
		case []any:
			for _, child := range x {
				walk(child, underEnv)
			}
		case string:
			if underEnv {
				names[x] = true
			}
		}
	}
	walk(doc, false)
	out := map[string]string{}
	for n := range names {
		if v, ok := daemonEnv[n]; ok {
			out[n] = v
		}
	}
	return out
}

// options is how the daemon's notifier dispatcher spawns the plugin:
// cwd = project root, the narrow allowlist, env_required, the *_env names
// as extras, and the notifier handshake.
func (p *project) options() e2etest.Options {
	env := map[string]string{"HOME": p.home}
	for k, v := range p.daemonEnv {
		env[k] = v
	}
	return e2etest.Options{Dir: p.root, EnvMode: fakehost.EnvDaemonNarrow, Env: env, Extra: forwarded(p.config, p.daemonEnv),
		Handshake: fakehost.Handshake{Preset: fakehost.PresetNotifier}}
}

// start spawns the plugin and runs the notifier client's handshake.
func (p *project) start(t testing.TB) *fakehost.Host {
	t.Helper()
	return e2etest.Spawn(t, binaryName, p.options())
}

func (p *project) event(id, eventType, data string) map[string]any {
	return map[string]any{
		"schema": "animus.daemon.event.v1", "id": id, "seq": 1, "timestamp": "2026-05-31T00:00:00.123456+00:00",
		"event_type": eventType, "project_root": p.root, "data": json.RawMessage(data),
	}
}

type lifecycleEvent struct {
	EventType   string         `json:"event_type"`
	ProjectRoot string         `json:"project_root"`
	Data        map[string]any `json:"data"`
}

type notifyResult struct {
	Accepted        bool             `json:"accepted"`
	Delivered       int              `json:"delivered"`
	LifecycleEvents []lifecycleEvent `json:"lifecycle_events"`
}

func typesOf(evs []lifecycleEvent) string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = strings.TrimPrefix(e.EventType, "notification-delivery-")
	}
	return strings.Join(out, ",")
}

// notify sends notifier/notify within the daemon's 15 s budget
// (e2etest.CallTimeout).
func notify(t testing.TB, h *fakehost.Host, ev map[string]any) notifyResult {
	t.Helper()
	return e2etest.Decode[notifyResult](t, e2etest.Call(t, h, "notifier/notify", map[string]any{"event": ev}))
}

// flush sends the daemon's tick: notifier/flush {}.
func flush(t testing.TB, h *fakehost.Host) []lifecycleEvent {
	t.Helper()
	return e2etest.Decode[struct {
		LifecycleEvents []lifecycleEvent `json:"lifecycle_events"`
	}](t, e2etest.Call(t, h, "notifier/flush", json.RawMessage(`{}`))).LifecycleEvents
}

// tickUntil flushes every interval until done, given every lifecycle
// event so far (start, then the flushes'), reports true, failing after
// limit. It returns all of them.
func tickUntil(t testing.TB, h *fakehost.Host, start []lifecycleEvent, interval, limit time.Duration, done func([]lifecycleEvent) bool) []lifecycleEvent {
	t.Helper()
	evs := start
	deadline := time.Now().Add(limit)
	for !done(evs) {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met after %v of flush ticks; lifecycle so far: %s", limit, typesOf(evs))
		}
		time.Sleep(interval)
		evs = append(evs, flush(t, h)...)
	}
	return evs
}

// webhookConfig: one signed webhook connector "ops" subscribed to every
// event, with a fast retry policy.
func webhookConfig(extraConnector string) string {
	return `{"schema":"animus.daemon-notification-config.v1","version":1,
		"connectors":[{"type":"webhook","id":"ops","url_env":"OPS_WEBHOOK_URL","signing_secret_env":"OPS_SIGNING_SECRET"` + extraConnector + `}],
		"subscriptions":[{"id":"all-to-ops","connector_id":"ops","event_types":["*"]}],
		"retry_policy":{"max_attempts":5,"base_delay_secs":1,"max_delay_secs":4},"max_deliveries_per_tick":16}`
}

const opsSecret = "whsec_ZTJlLXNpZ25pbmcta2V5LWJ5dGVzLTAxMjM0NQ=="

func describe(reqs []received) string {
	var b strings.Builder
	for _, r := range reqs {
		fmt.Fprintf(&b, "%s %d %s attempt %s\n", r.at.Format("15:04:05.000"), r.status, r.header.Get("Idempotency-Key"),
			r.header.Get("X-Animus-Delivery-Attempt"))
	}
	return b.String()
}
