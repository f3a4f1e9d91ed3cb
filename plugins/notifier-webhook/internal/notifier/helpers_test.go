package notifier

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/pluginkittest"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// scripted is a receiver answering a status sequence (the last repeats),
// recording every request.
type scripted struct {
	*httptest.Server
	mu       sync.Mutex
	statuses []int
	header   http.Header // added to every response
	delay    time.Duration
	reqs     []seen
}

type seen struct {
	header http.Header
	body   []byte
}

func newScripted(t *testing.T, statuses ...int) *scripted {
	s := &scripted{statuses: statuses, header: http.Header{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, seen{header: r.Header.Clone(), body: b})
		status := s.statuses[min(n, len(s.statuses)-1)]
		delay := s.delay
		for k, v := range s.header {
			w.Header()[k] = v
		}
		s.mu.Unlock()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *scripted) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.reqs...)
}

func (s *scripted) setDelay(d time.Duration) {
	s.mu.Lock()
	s.delay = d
	s.mu.Unlock()
}

func (s *scripted) setStatuses(st ...int) {
	s.mu.Lock()
	s.statuses = st
	s.reqs = s.reqs[:len(s.reqs):len(s.reqs)]
	s.mu.Unlock()
}

// harness is a Service bound to a temp project with a pm-config.json.
type harness struct {
	t       *testing.T
	svc     *Service
	clock   *fakeClock
	project string
	env     map[string]string
	cfgPath string
}

type harnessOpts struct {
	config      string // notification_config JSON
	env         map[string]string
	syncBudget  time.Duration
	flushBudget time.Duration
	dbPath      string
	project     string
}

func newHarness(t *testing.T, o harnessOpts) *harness {
	t.Helper()
	project := o.project
	if project == "" {
		project = t.TempDir()
	}
	h := &harness{t: t, clock: &fakeClock{t: time.Unix(1_700_000_000, 0)}, project: project, env: map[string]string{}}
	for k, v := range o.env {
		h.env[k] = v
	}
	if o.dbPath != "" {
		h.env["ANIMUS_NOTIFIER_DB_PATH"] = o.dbPath
	}
	h.cfgPath = filepath.Join(project, ".animus", "pm-config.json")
	if o.config != "" {
		h.writeConfig(o.config)
	}
	h.svc = New(Options{
		Version: "test", Getenv: func(k string) string { return h.env[k] }, Home: t.TempDir(), Now: h.clock.Now,
		Random: func() float64 { return 0.5 }, Alive: func(int) bool { return false },
		SyncBudget: o.syncBudget, FlushBudget: o.flushBudget,
	})
	initialize(t, h.svc, project)
	t.Cleanup(func() { h.svc.Close(context.Background()) })
	return h
}

// initialize runs svc.Init as the host does, through pluginkittest, so the
// Service holds a real Peer: the secrets it registers are scrubbed as in
// production. Tests then call svc's handlers directly; the connection
// stays open until the test ends, when Start's cleanup checks that the
// plugin stops.
func initialize(t *testing.T, svc *Service, project string) {
	t.Helper()
	h := pluginkittest.Start(t, pluginkit.Plugin{Name: "animus-notifier-webhook", Kind: "notifier", Init: svc.Init})
	if _, err := h.Initialize(map[string]any{"project_binding": map[string]string{"project_root": project}}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
}

func (h *harness) writeConfig(section string) {
	h.t.Helper()
	if err := os.MkdirAll(filepath.Dir(h.cfgPath), 0o755); err != nil {
		h.t.Fatal(err)
	}
	doc := `{"notification_config":` + section + `}`
	if err := os.WriteFile(h.cfgPath, []byte(doc), 0o600); err != nil {
		h.t.Fatal(err)
	}
	// Defeat the loader's size+mtime cache for same-size rewrites.
	future := time.Now().Add(time.Duration(len(doc)) * time.Second)
	os.Chtimes(h.cfgPath, future, future)
}

func (h *harness) event(id, typ string, data string) *Event {
	root := h.project
	return &Event{Schema: "animus.daemon.event.v1", ID: id, Seq: 1, Timestamp: "2026-05-31T00:00:00.123456+00:00",
		EventType: typ, ProjectRoot: &root, Data: json.RawMessage(data)}
}

func (h *harness) notify(ev *Event) NotifyResult {
	h.t.Helper()
	p := NotifyParams{Event: ev}
	if err := p.Validate(); err != nil {
		h.t.Fatal(err)
	}
	res, err := h.svc.Notify(context.Background(), p)
	if err != nil {
		h.t.Fatalf("notify: %v", err)
	}
	return res
}

func (h *harness) flush() FlushResult {
	h.t.Helper()
	res, err := h.svc.Flush(context.Background(), FlushParams{})
	if err != nil {
		h.t.Fatalf("flush: %v", err)
	}
	return res
}

func types(evs []LifecycleEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.EventType
	}
	return out
}

// webhookConfig is one signed webhook connector subscribed to everything.
func webhookConfig(extra string) string {
	return `{"schema":"animus.daemon-notification-config.v1","version":1,
		"connectors":[{"type":"webhook","id":"ops","url_env":"OPS_URL","signing_secret_env":"OPS_SECRET"` + extra + `}],
		"subscriptions":[{"id":"all","connector_id":"ops","event_types":["*"]}],
		"retry_policy":{"max_attempts":3,"base_delay_secs":10,"max_delay_secs":60},"max_deliveries_per_tick":8}`
}

func attemptHeaders(reqs []seen) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.header.Get("Idempotency-Key") + "#" + r.header.Get("X-Animus-Delivery-Attempt")
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }
