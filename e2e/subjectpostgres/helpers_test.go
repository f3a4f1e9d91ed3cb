package subjectpostgres

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
)

// binaryName is the plugin under test.
var binaryName = pgns.Subject.Binary

const (
	sqliteName = "animus-subject-sqlite"
)

// listenQuery is the query text pg_stat_activity shows for a plugin
// process's dedicated LISTEN connection.
const listenQuery = "LISTEN animus_subjects"

// subjectSchemas is the upstream set plus result rows for task/…, the
// kind both plugins serve by default (schemacheck lists only the
// kind-independent subject/… methods), so task/* replies are checked as
// strictly as subject/*.
var subjectSchemas = sync.OnceValues(func() (*schemacheck.Set, error) {
	set, err := schemacheck.Default()
	if err != nil {
		return nil, err
	}
	for verb, typ := range map[string]string{"list": "SubjectList", "get": "Subject", "create": "Subject",
		"update": "Subject", "status": "Subject", "schema": "SubjectSchema", "delete": "DeleteSubjectResponse"} {
		if err := set.RegisterResult("task/"+verb, schemacheck.SubjectProtocol, typ); err != nil {
			return nil, err
		}
	}
	return set, nil
})

func schemas(t testing.TB) *schemacheck.Set {
	t.Helper()
	set, err := subjectSchemas()
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// host is one simulated machine: its own project root, the shared
// namespace. Every process it starts is bound to its root with the
// daemon's subject-router handshake, its frames schema-checked.
type host struct {
	t    *testing.T
	name string
	opts e2etest.Options
}

// newHost makes a host with a fresh project root whose processes reach
// s's namespace. declared is the manifest's env_required (probed once per
// test, not before every spawn).
func newHost(t *testing.T, name string, s pgns.NS, declared []string) *host {
	t.Helper()
	return &host{t: t, name: name, opts: e2etest.Options{Dir: e2etest.Project(t), Env: s.Map(nil), Declared: declared, Schemas: schemas(t)}}
}

// start spawns a process the way the daemon does and completes its
// handshake; fakehost prints its wire log and stderr if the test fails.
func (h *host) start() *fakehost.Host {
	h.t.Helper()
	return e2etest.Spawn(h.t, binaryName, h.opts)
}

// subject is the wire Subject as a test reads it.
type subject struct {
	ID       string                     `json:"id"`
	Kind     string                     `json:"kind"`
	Title    string                     `json:"title"`
	Status   string                     `json:"status"`
	Labels   []string                   `json:"labels"`
	Parent   *string                    `json:"parent"`
	Children []string                   `json:"children"`
	Custom   map[string]json.RawMessage `json:"custom"`
}

func call[T any](t testing.TB, h *fakehost.Host, method string, params any) T {
	t.Helper()
	return e2etest.Decode[T](t, e2etest.Call(t, h, method, params))
}

// watch opens a watch with request id id (raw JSON) and requires the
// plugin's acknowledgement.
func watch(t *testing.T, h *fakehost.Host, id, method string, params any) {
	t.Helper()
	resp, err := h.Request(e2etest.Ctx(t, 15*time.Second), json.RawMessage(id), method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	if resp.Error != nil || string(resp.Result) != `{"watching":true}` {
		t.Fatalf("%s: %+v %s\n--- wire log ---\n%s", method, resp.Error, resp.Result, h.WireLog())
	}
}

// received is one subject/changed event for a watch, when it arrived.
type received struct {
	Event json.RawMessage
	At    time.Time
}

// events returns the subject/changed events for the watch whose request
// id is watchID (compact JSON), in arrival order.
func events(t *testing.T, h *fakehost.Host, watchID string) []received {
	t.Helper()
	var out []received
	for _, n := range h.Notifications() {
		if n.Method != "subject/changed" {
			continue
		}
		var p struct {
			ID    json.RawMessage `json:"id"`
			Event json.RawMessage `json:"event"`
		}
		if err := json.Unmarshal(n.Params, &p); err != nil {
			t.Fatalf("subject/changed params: %s", n.Params)
		}
		if string(p.ID) == watchID {
			out = append(out, received{p.Event, n.At})
		}
	}
	return out
}

// logRow is one row of the namespace's change log.
type logRow struct {
	Seq   int64
	Event json.RawMessage
}

// changeLog reads s's change log after seq, in seq order: the record every
// watch must reproduce.
func changeLog(t *testing.T, s pgns.NS, after int64) []logRow {
	t.Helper()
	c := pgtest.Connect(t, s.DSN)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := c.Query(ctx, `SELECT seq, event_json FROM `+pgx.Identifier{s.Schema, "subject_events"}.Sanitize()+
		` WHERE seq > $1 ORDER BY seq`, after)
	if err != nil {
		t.Fatalf("reading the change log: %v", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (logRow, error) {
		var l logRow
		var text string
		err := r.Scan(&l.Seq, &text)
		l.Event = json.RawMessage(text)
		return l, err
	})
	if err != nil {
		t.Fatalf("reading the change log: %v", err)
	}
	return out
}

// lastSeq is the newest seq in s's change log (0 when empty).
func lastSeq(t *testing.T, s pgns.NS) int64 {
	t.Helper()
	var seq int64
	c := pgtest.Connect(t, s.DSN)
	if err := c.QueryRow(e2etest.Ctx(t, 10*time.Second), `SELECT COALESCE(max(seq), 0) FROM `+
		pgx.Identifier{s.Schema, "subject_events"}.Sanitize()).Scan(&seq); err != nil {
		t.Fatalf("last seq: %v", err)
	}
	return seq
}
