package subjects

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/pluginkittest"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// host is the plugin as main wires it, over a real SQLite file in
// t.TempDir(), served in process by pluginkittest: the kit frames, routes
// and records the wire and prints it if the test fails. What stays here is
// what the kit cannot know: the App behind the plugin, for tests that
// look inside it, and where the database is.
type host struct {
	*pluginkittest.Host
	t      *testing.T
	app    *App
	dbPath string // SQLite only
	open   func(ctx context.Context, root string, onCommit func()) (storage.Store, error)
	events int // index of the first frame eventsUntil has not looked at
}

// waitFor bounds every wait; it is a deadlock guard, never an assertion.
const waitFor = 10 * time.Second

// newHost starts the plugin with the environment env on top of a database
// in a fresh directory, without initializing it. Start's cleanup also
// fails the test unless Serve returns cleanly once stdin closes.
func newHost(t *testing.T, env map[string]string) *host {
	t.Helper()
	rules, err := LoadRules(func(k string) string { return env[k] }, testPrefix)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	open, dbPath := testBackend(t, env, rules)
	app := New(Options{Rules: rules, Open: open, Lazy: testLazy()})
	mux := pluginkit.NewMux()
	app.Register(mux)
	return &host{t: t, app: app, dbPath: dbPath, open: open, Host: pluginkittest.Start(t, pluginkit.Plugin{
		Name: "animus-subject-sqlite", Kind: "subject_backend", Mux: mux,
		ExtraCapabilities: app.Markers(), SubjectKinds: rules.Kinds, Streaming: true,
		Init: app.Init, Health: app.Health, Close: app.Close,
	})}
}

// openOther opens a second store on the host's database, as another
// process (or host) would.
func (h *host) openOther(t *testing.T) storage.Store {
	t.Helper()
	st, err := h.open(context.Background(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// start is newHost followed by the daemon's handshake.
func start(t *testing.T, env map[string]string) *host {
	t.Helper()
	h := newHost(t, env)
	if _, err := h.Initialize(nil); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return h
}

// use makes the helpers report to t, a subtest, until restore is called:
// FailNow must come from the goroutine running the (sub)test.
func (h *host) use(t *testing.T) (restore func()) {
	parent := h.t
	h.t = t
	return func() { h.t = parent }
}

// must fails on an error writing to the plugin: it has stopped reading.
func (h *host) must(err error) {
	h.t.Helper()
	if err != nil {
		h.t.Fatalf("write: %v", err)
	}
}

// await returns the response to request id.
func (h *host) await(id json.RawMessage) pluginkittest.Frame {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	f, err := h.Await(ctx, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return f
}

// ok is h.OK decoding into a T, for use inline.
func ok[T any](h *host, method string, params any) (v T) {
	h.t.Helper()
	h.OK(h.t, method, params, &v)
	return v
}

// create makes a subject through method and returns it.
func create(h *host, method string, params map[string]any) model.Subject {
	h.t.Helper()
	return ok[model.Subject](h, method, params)
}

// nativeOf is the ULID part of a subject id.
func nativeOf(id string) string { _, n, _ := strings.Cut(id, ":"); return n }
