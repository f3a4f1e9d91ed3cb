package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func open(t *testing.T, path string, c *clock) *Store {
	t.Helper()
	st, err := Open(context.Background(), Options{Path: path, Now: c.now, Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// openTwo opens two stores (two processes, as far as SQLite can tell) on
// one new outbox file.
func openTwo(t *testing.T, c *clock) (*Store, *Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "o.sqlite")
	return open(t, path, c), open(t, path, c)
}

func row(project, event, connector string) Delivery {
	return Delivery{
		DeliveryID: "id-" + project + "-" + event + "-" + connector, DeliveryKey: "key-" + project + "-" + event + "-" + connector,
		ProjectRoot: project, EventID: event, EventType: "workflow_completed", ConnectorID: connector,
		ConnectorType: "webhook", SubscriptionID: "s", Payload: []byte(`{"e":"` + event + `"}`),
	}
}

func ids(ds []*Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.DeliveryID
	}
	sort.Strings(out)
	return out
}

// Enqueue's decided hook sees exactly the rows being inserted, while they
// are not yet committed, and is not called when nothing is inserted.
func TestEnqueueDecidedBeforeCommit(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	st, other := openTwo(t, c)
	if _, err := st.Enqueue(ctx, []Delivery{row("/p", "old", "c")}, nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		rows   []Delivery
		calls  int
		hooked []string // ids the hook saw
	}{
		{"new and known", []Delivery{row("/p", "old", "c"), row("/p", "e1", "c"), row("/p", "e2", "c")}, 1,
			[]string{"id-/p-e1-c", "id-/p-e2-c"}},
		{"only known", []Delivery{row("/p", "old", "c"), row("/p", "e1", "c")}, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, err := other.Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			calls := 0
			var hooked []string
			got, err := st.Enqueue(ctx, tc.rows, nil, func(ds []*Delivery) {
				calls++
				hooked = ids(ds)
				during, err := other.Count(ctx)
				if err != nil || during != before {
					t.Errorf("inside the hook another connection sees %+v (%v), want %+v: committed early", during, err, before)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if calls != tc.calls || fmt.Sprint(hooked) != fmt.Sprint(tc.hooked) || fmt.Sprint(ids(got)) != fmt.Sprint(tc.hooked) {
				t.Fatalf("hook called %d times with %v, Enqueue returned %v; want %d with %v", calls, hooked, ids(got), tc.calls, tc.hooked)
			}
			after, _ := other.Count(ctx)
			if after.Pending != before.Pending+len(tc.hooked) {
				t.Fatalf("after: %+v, before %+v", after, before)
			}
		})
	}
}

func TestEnqueueDeduplicatesEvenAfterSent(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	st := open(t, filepath.Join(t.TempDir(), "o.sqlite"), c)
	wf := "wf-1"
	d := row("/p", "e1", "c")
	d.WorkflowID = &wf
	got, err := st.Enqueue(ctx, []Delivery{d, row("/p", "e1", "c2")}, func(*Delivery) bool { return true }, nil)
	if err != nil || len(got) != 2 || got[0].Status != Inflight || got[0].Attempts != 1 {
		t.Fatalf("first enqueue: %v %+v", err, got)
	}
	if err := st.MarkSent(ctx, got[0], 200); err != nil {
		t.Fatal(err)
	}
	again, err := st.Enqueue(ctx, []Delivery{d, row("/p", "e2", "c")}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 1 || again[0].EventID != "e2" || again[0].Status != Pending {
		t.Fatalf("re-enqueue inserted %+v, want only e2 as pending", again)
	}
	counts, _ := st.Count(ctx)
	if counts != (Counts{Pending: 1, Inflight: 1, Sent: 1}) {
		t.Fatalf("counts %+v", counts)
	}
	projects, _ := st.Projects(ctx)
	if len(projects) != 1 || projects[0] != "/p" {
		t.Fatalf("projects %v", projects)
	}
}

func TestClaimOrderLimitAndDue(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	st := open(t, filepath.Join(t.TempDir(), "o.sqlite"), c)
	var rows []Delivery
	for i := range 5 {
		rows = append(rows, row("/p", fmt.Sprint("e", i), "c"))
	}
	rows = append(rows, row("/other", "x", "c"))
	if _, err := st.Enqueue(ctx, rows, nil, nil); err != nil {
		t.Fatal(err)
	}
	first, err := st.Claim(ctx, "/p", 3)
	if err != nil || len(first) != 3 {
		t.Fatalf("claim: %v %d", err, len(first))
	}
	for _, d := range first {
		if d.Status != Inflight || d.Attempts != 1 || d.ProjectRoot != "/p" {
			t.Fatalf("claimed row %+v", d)
		}
	}
	// Retry one in 10 s; the other two claimed rows stay claimed.
	if err := st.MarkRetry(ctx, first[0], c.now().Add(10*time.Second), "HTTP 500", 500); err != nil {
		t.Fatal(err)
	}
	second, _ := st.Claim(ctx, "/p", 10)
	if len(second) != 2 {
		t.Fatalf("second claim got %v, want the 2 unclaimed rows", ids(second))
	}
	if none, _ := st.Claim(ctx, "/p", 10); len(none) != 0 {
		t.Fatalf("nothing should be due, got %v", ids(none))
	}
	c.advance(11 * time.Second)
	third, _ := st.Claim(ctx, "/p", 10)
	if len(third) != 1 || third[0].DeliveryID != first[0].DeliveryID || third[0].Attempts != 2 || third[0].LastError != "HTTP 500" {
		t.Fatalf("retried row %+v", third)
	}
}

func TestLeaseExpiryAndLostClaim(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	a, b := openTwo(t, c)
	if _, err := a.Enqueue(ctx, []Delivery{row("/p", "e", "c")}, nil, nil); err != nil {
		t.Fatal(err)
	}
	mine, _ := a.Claim(ctx, "/p", 1)
	if got, _ := b.Claim(ctx, "/p", 1); len(got) != 0 {
		t.Fatal("a claimed row was claimed twice")
	}
	c.advance(2 * time.Minute) // past the 1 min lease: a hung
	theirs, _ := b.Claim(ctx, "/p", 1)
	if len(theirs) != 1 || theirs[0].Attempts != 2 {
		t.Fatalf("expired claim not reclaimed: %+v", theirs)
	}
	if err := a.MarkSent(ctx, mine[0], 200); !errors.Is(err, ErrLostClaim) {
		t.Fatalf("stale owner's write = %v, want ErrLostClaim", err)
	}
	if err := b.MarkDead(ctx, theirs[0], "HTTP 400", 400); err != nil {
		t.Fatal(err)
	}
	dead, total, _ := b.ListDead(ctx, "", 10)
	if total != 1 || dead[0].LastStatusCode != 400 || dead[0].DeadAt.IsZero() {
		t.Fatalf("dead letters %+v", dead)
	}
}

func TestRecoverStale(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	path := filepath.Join(t.TempDir(), "o.sqlite")
	st := open(t, path, c)
	if _, err := st.Enqueue(ctx, []Delivery{row("/p", "e1", "c"), row("/p", "e2", "c")}, func(*Delivery) bool { return true }, nil); err != nil {
		t.Fatal(err)
	}
	// Pretend e2's claim belongs to another, live process.
	if _, err := st.db.ExecContext(ctx, `UPDATE deliveries SET claimed_pid = 999999 WHERE event_id = 'e2'`); err != nil {
		t.Fatal(err)
	}
	alive := func(pid int) bool { return pid == 999999 }
	n, err := st.RecoverStale(ctx, alive)
	if err != nil || n != 1 {
		t.Fatalf("recovered %d (%v), want 1: our own pid's claim is stale by definition", n, err)
	}
	got, _ := st.Claim(ctx, "/p", 10)
	if len(got) != 1 || got[0].EventID != "e1" || got[0].Attempts != 2 {
		t.Fatalf("after recovery claimed %+v, want e1 with its crashed attempt counted", got)
	}
	if n, _ := st.RecoverStale(ctx, func(int) bool { return false }); n != 2 {
		t.Fatalf("a dead owner's claims: recovered %d, want 2", n)
	}
}

func TestReleaseUndoesTheAttempt(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	st := open(t, filepath.Join(t.TempDir(), "o.sqlite"), c)
	st.Enqueue(ctx, []Delivery{row("/p", "e", "c")}, nil, nil)
	got, _ := st.Claim(ctx, "/p", 1)
	if err := st.Release(ctx, got); err != nil {
		t.Fatal(err)
	}
	again, _ := st.Claim(ctx, "/p", 1)
	if len(again) != 1 || again[0].Attempts != 1 {
		t.Fatalf("released row came back as %+v, want attempts 1", again)
	}
}

func TestReplay(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	st := open(t, filepath.Join(t.TempDir(), "o.sqlite"), c)
	claimed, err := st.Enqueue(ctx, []Delivery{row("/p", "e1", "c"), row("/p", "e2", "c"), row("/q", "e3", "c")},
		func(*Delivery) bool { return true }, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range claimed {
		if err := st.MarkDead(ctx, d, "HTTP 400", 400); err != nil {
			t.Fatal(err)
		}
	}
	replayed, notFound, err := st.Replay(ctx, "/p", []string{"id-/p-e1-c", "id-/q-e3-c", "nope"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(replayed) != "[id-/p-e1-c]" || fmt.Sprint(notFound) != "[id-/q-e3-c nope]" {
		t.Fatalf("replayed %v, not found %v", replayed, notFound)
	}
	got, _ := st.Claim(ctx, "/p", 10)
	if len(got) != 1 || got[0].Attempts != 1 || got[0].DeliveryID != "id-/p-e1-c" {
		t.Fatalf("replayed row claimed as %+v, want a fresh attempt budget", got)
	}
	replayed, _, _ = st.Replay(ctx, "", nil, true)
	if len(replayed) != 2 {
		t.Fatalf("replay all: %v", replayed)
	}
	if n, _ := st.DeadCount(ctx); n != 0 {
		t.Fatalf("dead count %d after replaying all", n)
	}
}

func TestPruneSent(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	st := open(t, filepath.Join(t.TempDir(), "o.sqlite"), c)
	got, _ := st.Enqueue(ctx, []Delivery{row("/p", "e1", "c"), row("/p", "e2", "c")}, func(*Delivery) bool { return true }, nil)
	st.MarkSent(ctx, got[0], 200)
	c.advance(48 * time.Hour)
	st.MarkSent(ctx, got[1], 200)
	n, err := st.PruneSent(ctx, c.now().Add(-24*time.Hour), 100)
	if err != nil || n != 1 {
		t.Fatalf("pruned %d (%v), want 1", n, err)
	}
	counts, _ := st.Count(ctx)
	if counts.Sent != 1 {
		t.Fatalf("counts %+v", counts)
	}
}

// TestConcurrentClaimsNeverOverlap has two connections (as two processes
// would) claim from the same file at once.
func TestConcurrentClaimsNeverOverlap(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	a, b := openTwo(t, c)
	var rows []Delivery
	for i := range 200 {
		rows = append(rows, row("/p", fmt.Sprint("e", i), "c"))
	}
	if _, err := a.Enqueue(ctx, rows, nil, nil); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, st := range []*Store{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				got, err := st.Claim(ctx, "/p", 7)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, d := range got {
					seen[d.DeliveryID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != 200 {
		t.Fatalf("claimed %d distinct rows, want 200", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("%s claimed %d times", id, n)
		}
	}
}

// BenchmarkEnqueueMarkSent is notify's outbox work: one claimed row
// committed durably, then its outcome recorded. Reported besides ns/op:
// each half's mean and one 4 KiB write+fsync on the same disk.
func BenchmarkEnqueueMarkSent(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	st, err := Open(ctx, Options{Path: filepath.Join(dir, "o.sqlite")})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	f, err := os.Create(filepath.Join(dir, "probe"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	page := make([]byte, 4096)
	payload := make([]byte, 420)
	var enq, mark, sync time.Duration
	b.ResetTimer()
	for i := range b.N {
		d := Delivery{DeliveryID: "id-" + strconv.Itoa(i), DeliveryKey: "key-" + strconv.Itoa(i), ProjectRoot: dir,
			EventID: "e", EventType: "workflow_completed", ConnectorID: "c", ConnectorType: "webhook", SubscriptionID: "s", Payload: payload}
		t0 := time.Now()
		got, err := st.Enqueue(ctx, []Delivery{d}, func(*Delivery) bool { return true }, nil)
		if err != nil || len(got) != 1 {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := st.MarkSent(ctx, got[0], 204); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		enq += t1.Sub(t0)
		mark += t2.Sub(t1)
		b.StopTimer()
		t3 := time.Now()
		f.WriteAt(page, 0)
		f.Sync()
		sync += time.Since(t3)
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(float64(enq.Microseconds())/n, "enqueue-µs")
	b.ReportMetric(float64(mark.Microseconds())/n, "marksent-µs")
	b.ReportMetric(float64(sync.Microseconds())/n, "fsync-µs")
}
