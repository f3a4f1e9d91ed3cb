package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/queue-sqlite/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/queue-sqlite/internal/store"
)

// fixture is a bound Service on a temp project with a clock the test moves
// and ids it can predict (id-1, id-2, …, shared by entries and minted
// workflow ids).
type fixture struct {
	t   *testing.T
	s   *Service
	dir string
	now time.Time
	ids int
}

var t0 = time.Date(2026, 6, 14, 12, 0, 0, 123456789, time.UTC)

func newFixture(t *testing.T, cfg config.Config) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), now: t0}
	f.s = New(Options{
		Config: cfg,
		Now:    func() time.Time { return f.now },
		NewID:  func() string { f.ids++; return fmt.Sprintf("id-%d", f.ids) },
	})
	if err := f.s.Init(context.Background(), nil, bindParams(f.dir)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.s.Close(context.Background()) })
	return f
}

func bindParams(root string) pluginkit.InitializeParams {
	raw, _ := json.Marshal(map[string]string{"project_root": root, "repo_scope": "x"})
	return pluginkit.InitializeParams{ProtocolVersion: "1.1.0", InitExtensions: map[string]json.RawMessage{"project_binding": raw}}
}

// handlers maps method names to the Service's handlers with their results
// as JSON, so tests compare exact wire bytes.
func (f *fixture) handlers() map[string]func(context.Context, json.RawMessage) (any, error) {
	s := f.s
	return map[string]func(context.Context, json.RawMessage) (any, error){
		"queue/enqueue":         adapt(s.enqueue),
		"queue/list":            adapt(s.list),
		"queue/lease":           adapt(s.lease),
		"queue/stats":           adapt(s.stats),
		"queue/next_deadline":   adapt(s.nextDeadline),
		"queue/hold":            adapt(s.hold),
		"queue/release":         adapt(s.release),
		"queue/release_pending": adapt(s.releasePending),
		"queue/drop":            adapt(s.drop),
		"queue/reorder":         adapt(s.reorder),
		"queue/mark_assigned":   adapt(s.markAssigned),
		"queue/completion":      adapt(s.completion),
	}
}

func adapt[R any](h func(context.Context, json.RawMessage) (R, error)) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, raw json.RawMessage) (any, error) { return h(ctx, raw) }
}

// call invokes method with params ("" = no params) and returns the result
// as compact JSON, or the error.
func (f *fixture) call(method, params string) (string, error) {
	f.t.Helper()
	h, ok := f.handlers()[method]
	if !ok {
		f.t.Fatalf("no handler %s", method)
	}
	var raw json.RawMessage
	if params != "" {
		raw = json.RawMessage(params)
	}
	res, err := h(context.Background(), raw)
	if err != nil {
		return "", err
	}
	b, err := marshalResult(res)
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b), nil
}

func marshalResult(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

func (f *fixture) ok(method, params string) string {
	f.t.Helper()
	out, err := f.call(method, params)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, params, err)
	}
	return out
}

// want checks an exact result.
func (f *fixture) want(method, params, result string) {
	f.t.Helper()
	if got := f.ok(method, params); got != result {
		f.t.Errorf("%s %s\n got %s\nwant %s", method, params, got, result)
	}
}

// wantErr checks an error's code, message (substring) and extra data.
func (f *fixture) wantErr(method, params string, code int, msg string, data map[string]any) {
	f.t.Helper()
	_, err := f.call(method, params)
	checkErr(f.t, err, code, msg, data)
}

func checkErr(t *testing.T, err error, code int, msg string, data map[string]any) {
	t.Helper()
	var pe *pluginkit.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T), want a pluginkit error %d", err, err, code)
	}
	if pe.Code != code || !strings.Contains(pe.Message, msg) {
		t.Errorf("error %d %q, want %d containing %q", pe.Code, pe.Message, code, msg)
	}
	for k, v := range data {
		if got, _ := json.Marshal(pe.Data[k]); string(got) != mustJSON(v) {
			t.Errorf("error data %s = %s, want %s", k, got, mustJSON(v))
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// enqueue adds an entry for subject (a legacy task id, or "kind::id") and
// returns its id.
func (f *fixture) enqueue(subject string, extra string) string {
	f.t.Helper()
	subj := `{"Task":{"id":"` + subject + `"}}`
	if kind, id, ok := strings.Cut(subject, "::"); ok {
		subj = `{"kind":"` + kind + `","id":"` + id + `"}`
	}
	params := `{"subject_dispatch":{"requested_at":"2026-06-14T11:00:00Z","subject":` + subj +
		`,"trigger_source":"test","workflow_ref":"standard"}` + extra + `}`
	var r struct {
		EntryID string `json:"entry_id"`
	}
	if err := json.Unmarshal([]byte(f.ok("queue/enqueue", params)), &r); err != nil {
		f.t.Fatal(err)
	}
	return r.EntryID
}

// states returns "id:status" in queue order.
func (f *fixture) states() string {
	f.t.Helper()
	var r struct {
		Entries []struct {
			EntryID string `json:"entry_id"`
			Status  string `json:"status"`
		} `json:"entries"`
	}
	if err := json.Unmarshal([]byte(f.ok("queue/list", "")), &r); err != nil {
		f.t.Fatal(err)
	}
	var parts []string
	for _, e := range r.Entries {
		parts = append(parts, e.EntryID+":"+e.Status)
	}
	return strings.Join(parts, " ")
}

// checkCounts compares the stats (kept by triggers) with the statuses the
// list actually shows.
func (f *fixture) checkCounts() {
	f.t.Helper()
	var r struct {
		Entries []struct {
			Status string `json:"status"`
		} `json:"entries"`
		Stats map[string]int `json:"stats"`
	}
	if err := json.Unmarshal([]byte(f.ok("queue/list", "")), &r); err != nil {
		f.t.Fatal(err)
	}
	real := map[string]int{"total": len(r.Entries)}
	for _, e := range r.Entries {
		real[e.Status]++
	}
	for _, k := range []string{"pending", "assigned", "held", "total"} {
		if r.Stats[k] != real[k] {
			f.t.Errorf("stats.%s = %d, the list shows %d", k, r.Stats[k], real[k])
		}
	}
}

// audit returns the store's audit trail as "entry method from>to reason".
func (f *fixture) audit() []string {
	f.t.Helper()
	st, err := f.s.open(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	err = st.View(context.Background(), func(r *store.Reader) error {
		trail, err := r.AuditTrail(context.Background(), "", 1000)
		for _, a := range trail {
			from, reason := "-", ""
			if a.From != nil {
				from = *a.From
			}
			if a.Reason != nil {
				reason = " " + *a.Reason
			}
			out = append(out, fmt.Sprintf("%s %s %s>%s%s", a.EntryID, a.Method, from, a.To, reason))
		}
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

func (f *fixture) dbPath() string { return filepath.Join(f.dir, ".animus", "queue.sqlite") }
