package subjectpostgres

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
)

// TestConcurrentLabelsAdd: four processes, two on each of two hosts (one
// namespace), send 100 task/update {labels_add: [l-<n>]} to one subject
// at the same time. Each update is a read-modify-write under the
// namespace lock, so none may overwrite another: every process then reads
// all 100 labels, the label index finds the subject by any of them, and
// the change log holds exactly one update event per request.
func TestConcurrentLabelsAdd(t *testing.T) {
	const n = 100
	s := pgns.Subject.New(t)
	declared := e2etest.Declared(t, binaryName)
	var procs []*fakehost.Host
	for _, name := range []string{"a", "b"} {
		h := newHost(t, name, s, declared)
		procs = append(procs, h.start(), h.start())
	}
	target := call[subject](t, procs[0], "task/create", map[string]any{"title": "contended"})

	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		p := procs[i%len(procs)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			rpcErr, err := e2etest.Try(p, time.Minute, "task/update",
				map[string]any{"id": target.ID, "patch": map[string]any{"labels_add": []string{fmt.Sprintf("l-%d", i)}}}, nil)
			if err == nil && rpcErr != nil {
				err = rpcErr
			}
			if err != nil {
				t.Errorf("labels_add l-%d: %v\n--- wire log ---\n%s", i, err, p.WireLog())
			}
		}()
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("l-%d", i))
	}
	slices.Sort(want)
	for i, p := range procs {
		got := call[subject](t, p, "task/get", map[string]string{"id": target.ID})
		labels := slices.Sorted(slices.Values(got.Labels))
		if !slices.Equal(labels, want) {
			t.Fatalf("process %d reads %d labels, want all %d: missing %v", i, len(got.Labels), n, missing(want, labels))
		}
	}
	l := call[struct {
		Subjects []subject `json:"subjects"`
	}](t, procs[3], "task/list", map[string]any{"labels_all": []string{"l-0", "l-57", "l-99"}})
	if len(l.Subjects) != 1 || l.Subjects[0].ID != target.ID {
		t.Fatalf("labels_all over added labels found %+v", l.Subjects)
	}

	c := pgtest.Connect(t, s.DSN)
	rows, err := c.Query(e2etest.Ctx(t, 10*time.Second), `SELECT change_kind FROM `+
		pgx.Identifier{s.Schema, "subject_events"}.Sanitize()+` WHERE subject_id = $1 ORDER BY seq`, target.ID)
	if err != nil {
		t.Fatal(err)
	}
	kinds, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	updated := 0
	for _, k := range kinds {
		if k == "updated" {
			updated++
		}
	}
	if updated != n || len(kinds) != n+1 || kinds[0] != "created" {
		t.Fatalf("the change log holds %d events for the subject (%d updated), want created + %d updated: %v", len(kinds), updated, n, kinds)
	}
}

// missing is want minus got (both sorted).
func missing(want, got []string) []string {
	var out []string
	for _, w := range want {
		if _, ok := slices.BinarySearch(got, w); !ok {
			out = append(out, w)
		}
	}
	return out
}
