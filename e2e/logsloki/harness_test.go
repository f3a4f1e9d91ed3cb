package logsloki

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

const binary = "animus-logs-loki"

// realLoki is the operator's Loki (make e2e-loki), or "".
func realLoki() string { return os.Getenv("LOKI_URL") }

// backend is the Loki a test runs against.
type backend struct {
	t    testing.TB
	fake *fakeloki.Server // nil against a real Loki
	env  map[string]string
	// uniq isolates this test's entries: it is the source_name of every
	// entry the test builds and the first segment of their targets.
	uniq string
}

// newBackend starts a fakeloki with o, or uses the real Loki from
// LOKI_URL (forwarding its LOKI_* settings).
func newBackend(t testing.TB, o fakeloki.Options) *backend {
	t.Helper()
	b := &backend{t: t, env: map[string]string{},
		uniq: fmt.Sprintf("e2e-%s-%d", strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())), time.Now().UnixNano()%1e9)}
	// A stream label of its own gives each test fresh streams: no
	// out-of-order conflicts with other tests' entries on a shared Loki.
	b.env["LOKI_EXTRA_LABELS"] = "e2e_test=" + b.uniq
	if u := realLoki(); u != "" {
		for _, kv := range os.Environ() {
			if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "LOKI_") && k != "LOKI_EXTRA_LABELS" {
				b.env[k] = v
			}
		}
		b.env["LOKI_URL"] = u
		return b
	}
	b.fake = fakeloki.New(t, o)
	b.env["LOKI_URL"] = b.fake.URL()
	return b
}

// needFake skips a test that needs fakeloki's fault injection or
// counters when the suite runs against a real Loki.
func (b *backend) needFake(why string) {
	b.t.Helper()
	if b.fake == nil {
		b.t.Skipf("needs fakeloki (%s); LOKI_URL points at a real Loki", why)
	}
}

// start spawns the plugin as the daemon does, with extra env on top.
func (b *backend) start(extra map[string]string) *fakehost.Host {
	b.t.Helper()
	env := map[string]string{}
	for k, v := range b.env {
		env[k] = v
	}
	for k, v := range extra {
		env[k] = v
	}
	return startPlugin(b.t, env)
}

// startPlugin spawns the plugin as the daemon's generic host does.
func startPlugin(t testing.TB, env map[string]string) *fakehost.Host {
	t.Helper()
	return e2etest.Spawn(t, binary, e2etest.Options{Env: env})
}

// wantErr checks an error's code, category and message.
func wantErr(t testing.TB, e *fakehost.RPCError, code int, category, msgPart string) {
	t.Helper()
	if e.Code != code || e.Category() != category || !strings.Contains(e.Message, msgPart) {
		t.Fatalf("error %d %q (category %q), want %d %s containing %q", e.Code, e.Message, e.Category(), code, category, msgPart)
	}
}

// logEntry is the wire LogEntry.
type logEntry struct {
	ID         string          `json:"id"`
	TS         string          `json:"ts"`
	Level      string          `json:"level"`
	Source     string          `json:"source"`
	SourceName *string         `json:"source_name,omitempty"`
	Target     string          `json:"target"`
	Message    string          `json:"message"`
	Fields     json.RawMessage `json:"fields,omitempty"`
}

// entry builds an entry of this test: source_name = uniq, target
// "<uniq>.<target>".
func (b *backend) entry(id string, ts time.Time, level, source, target string) logEntry {
	sn := b.uniq
	return logEntry{ID: b.uniq + "-" + id, TS: ts.UTC().Format(time.RFC3339Nano), Level: level, Source: source,
		SourceName: &sn, Target: b.uniq + "." + target, Message: "message " + id, Fields: json.RawMessage(`{"n":1}`)}
}

func store(t testing.TB, h *fakehost.Host, entries ...logEntry) {
	t.Helper()
	var res struct {
		Stored *int `json:"stored"`
	}
	if err := json.Unmarshal(e2etest.Call(t, h, "log_storage/store", map[string]any{"entries": entries}), &res); err != nil || res.Stored == nil || *res.Stored != len(entries) {
		t.Fatalf("store: stored %v, want %d (%v)", res.Stored, len(entries), err)
	}
}

type queryResult struct {
	Entries    []logEntry `json:"entries"`
	NextCursor *string    `json:"next_cursor"`
}

func query(t testing.TB, h *fakehost.Host, q map[string]any) queryResult {
	t.Helper()
	var res queryResult
	if err := json.Unmarshal(e2etest.Call(t, h, "log_storage/query", q), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// ids lists the entries' ids without the test prefix.
func (b *backend) ids(es []logEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = strings.TrimPrefix(e.ID, b.uniq+"-")
	}
	return out
}

func sameList(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// events collects log_storage/event notifications for one tail id.
func events(h *fakehost.Host, id string) (entries []logEntry, errs []json.RawMessage) {
	for _, n := range h.Notifications() {
		if n.Method != "log_storage/event" {
			continue
		}
		var p struct {
			ID    json.RawMessage `json:"id"`
			Entry *logEntry       `json:"entry"`
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(n.Params, &p) != nil || string(p.ID) != id {
			continue
		}
		if p.Entry != nil {
			entries = append(entries, *p.Entry)
		}
		if p.Error != nil {
			errs = append(errs, p.Error)
		}
	}
	return entries, errs
}

// waitEvents waits until tail id has delivered n entries (or an error).
func waitEvents(t testing.TB, h *fakehost.Host, id string, n int, within time.Duration) []logEntry {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		es, errs := events(h, id)
		if len(es) >= n || len(errs) > 0 || time.Now().After(deadline) {
			if len(errs) > 0 {
				t.Fatalf("tail %s ended with an error: %s", id, errs[0])
			}
			return es
		}
		time.Sleep(20 * time.Millisecond)
	}
}
