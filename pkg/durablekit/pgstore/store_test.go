package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/steplog"
	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
)

// openT opens a Store on a fresh schema of the test cluster.
func openT(t *testing.T) *Store {
	t.Helper()
	dsn := pgtest.DSN(t)
	return openSchema(t, dsn, pgtest.Schema(t, dsn), time.Second)
}

// openSchema opens another Store on schema (closed at cleanup).
func openSchema(t *testing.T, dsn, schema string, lockTimeout time.Duration) *Store {
	t.Helper()
	db, err := pgkit.Open(pgkit.Options{DSN: dsn, Schema: schema, MaxConns: 4, AppName: "durable-pgstore-test"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := Open(context.Background(), Options{DB: db, LockTimeout: lockTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func update(t *testing.T, st *Store, fn func(tx storage.Store) error) {
	t.Helper()
	if err := st.Update(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func TestOpenMigratesAndRefusesNewerSchema(t *testing.T) {
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			db, err := pgkit.Open(pgkit.Options{DSN: dsn, Schema: schema, MaxConns: 1})
			if err == nil {
				var st *Store
				if st, err = Open(context.Background(), Options{DB: db}); err == nil {
					err = st.Ping(context.Background())
					st.Close()
				}
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent open: %v", err)
		}
	}
	c := pgtest.Connect(t, dsn)
	if _, err := c.Exec(context.Background(), `INSERT INTO `+schema+`.schema_migrations (version, name) VALUES (99, 'future')`); err != nil {
		t.Fatal(err)
	}
	db, err := pgkit.Open(pgkit.Options{DSN: dsn, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), Options{DB: db}); !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("open of a newer schema: %v, want ErrNewerSchema", err)
	}
}

// Two Stores on one schema (two pools, as two processes have) race
// begin_step on the same keys through steplog: exactly one "new" per key.
func TestTwoStoresExactlyOneNewPerKey(t *testing.T) {
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	a, b := openSchema(t, dsn, schema, 10*time.Second), openSchema(t, dsn, schema, 10*time.Second)
	now := func() time.Time { return t0 }
	logs := []*steplog.Log{steplog.New(a, now), steplog.New(b, now)}
	ctx := context.Background()
	if _, err := logs[0].BeginWorkflowRun(ctx, "r", "p", nil); err != nil {
		t.Fatal(err)
	}
	const keys = 30
	var mu sync.Mutex
	news := map[string][]string{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range 4 {
		l := logs[w%2]
		wg.Go(func() {
			<-start
			for i := range keys {
				k := (i + w*11) % keys
				key := fmt.Sprint("key-", k)
				r, err := l.BeginStep(ctx, steplog.StepRequest{
					Identity:       storage.Identity{RunID: "r", PhaseID: "p", StepName: fmt.Sprint(k)},
					IdempotencyKey: key, TTL: time.Hour,
				})
				if err != nil {
					t.Error(err)
					return
				}
				if r.Status == steplog.StatusNew {
					mu.Lock()
					news[key] = append(news[key], r.StepID)
					mu.Unlock()
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if len(news) != keys {
		t.Errorf("%d keys got a new reservation, want %d", len(news), keys)
	}
	for k, ids := range news {
		if len(ids) != 1 {
			t.Errorf("%s: %d callers got new: %v", k, len(ids), ids)
		}
	}
	inflight, err := logs[1].RecoverInFlight(ctx, 0)
	if err != nil || len(inflight) != 1 || len(inflight[0].Outstanding) != keys {
		t.Errorf("recover_in_flight: %+v, %v", inflight, err)
	}
}

// holdLock keeps an Update open on st until release is called; held is
// closed once the namespace lock is taken.
func holdLock(t *testing.T, st *Store) (release func(), held chan struct{}) {
	t.Helper()
	held = make(chan struct{})
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- st.Update(context.Background(), func(tx storage.Store) error {
			close(held)
			<-stop
			return nil
		})
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			if err := <-done; err != nil {
				t.Errorf("lock holder: %v", err)
			}
		})
	}, held
}

func TestLockTimeoutIsBusy(t *testing.T) {
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	holder := openSchema(t, dsn, schema, time.Second)
	other := openSchema(t, dsn, schema, 80*time.Millisecond)
	elsewhere := openSchema(t, dsn, pgtest.Schema(t, dsn), 80*time.Millisecond)
	release, held := holdLock(t, holder)
	defer release()
	<-held
	start := time.Now()
	ran := false
	err := other.Update(context.Background(), func(tx storage.Store) error { ran = true; return nil })
	var be *storage.BackendError
	if !errors.As(err, &be) || !be.Busy || !pgkit.IsLockTimeout(err) {
		t.Fatalf("update beside a writer: %v, want a busy BackendError (55P03)", err)
	}
	if ran {
		t.Error("fn ran without the namespace lock")
	}
	// It waited for the lock (about the timeout) and gave up; the upper
	// bound is a hang detector.
	if d := time.Since(start); d < 60*time.Millisecond || d > 30*time.Second {
		t.Errorf("gave up after %v", d)
	}
	if strings.Contains(err.Error(), dsn) {
		t.Error("the error carries the DSN")
	}
	// Reads are not blocked by the writer.
	if err := other.View(context.Background(), func(r storage.Store) error {
		_, err := r.InFlight(context.Background(), 0)
		return err
	}); err != nil {
		t.Errorf("read beside a writer: %v", err)
	}
	if err := elsewhere.Update(context.Background(), func(tx storage.Store) error { return nil }); err != nil {
		t.Errorf("another namespace waited for this one's lock: %v", err)
	}
}

func TestUnreachableIsBusy(t *testing.T) {
	const dsn = "postgres://durable:s3cret-pw@127.0.0.1:1/none?sslmode=disable"
	db, err := pgkit.Open(pgkit.Options{DSN: dsn, Schema: "d", ConnectTimeout: time.Second, OpTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	st := newStore(Options{DB: db})
	defer st.Close()
	for name, call := range map[string]func() error{
		"update": func() error {
			return st.Update(context.Background(), func(storage.Store) error { return nil })
		},
		"view": func() error { return st.View(context.Background(), func(storage.Store) error { return nil }) },
		"ping": func() error { return st.Ping(context.Background()) },
		"unbound": func() error {
			_, err := st.NextEpoch(context.Background())
			return err
		},
	} {
		start := time.Now()
		err := call()
		var be *storage.BackendError
		if !errors.As(err, &be) || !be.Busy {
			t.Errorf("%s: %v (%T), want a busy *storage.BackendError", name, err, err)
		}
		if d := time.Since(start); d > 30*time.Second { // a hang detector, not a speed target
			t.Errorf("%s took %v", name, d)
		}
		if err != nil && (strings.Contains(err.Error(), "s3cret-pw") || strings.Contains(err.Error(), dsn)) {
			t.Errorf("%s: the error carries the DSN: %v", name, err)
		}
	}
	db2, _ := pgkit.Open(pgkit.Options{DSN: dsn, Schema: "d", ConnectTimeout: time.Second})
	var be *storage.BackendError
	if _, err := Open(context.Background(), Options{DB: db2}); !errors.As(err, &be) || !be.Busy {
		t.Errorf("open: %v, want a busy *storage.BackendError", err)
	}
}

// A lost COMMIT (pgkit.ErrCommitUnknown) is busy: retrying is safe.
func TestCommitUnknownIsBusy(t *testing.T) {
	err := wrap("write", fmt.Errorf("%w: %w", pgkit.ErrCommitUnknown, errors.New("connection reset")), nil)
	var be *storage.BackendError
	if !errors.As(err, &be) || !be.Busy || !errors.Is(err, pgkit.ErrCommitUnknown) {
		t.Errorf("lost commit: %v, want a busy BackendError", err)
	}
}

func TestErrorsPassThroughAndRollBack(t *testing.T) {
	st := openT(t)
	ctx := context.Background()
	for name, mine := range map[string]error{"log": steplog.ErrRunNotFound, "backend": &storage.BackendError{Op: "x", Err: errors.New("y")}} {
		if err := st.Update(ctx, func(storage.Store) error { return mine }); err != mine {
			t.Errorf("%s: update returned %v, want fn's error unchanged", name, err)
		}
		if err := st.View(ctx, func(storage.Store) error { return mine }); err != mine {
			t.Errorf("%s: view returned %v, want fn's error unchanged", name, err)
		}
	}
	boom := errors.New("boom")
	err := st.Update(ctx, func(tx storage.Store) error {
		if _, err := tx.NextEpoch(ctx); err != nil {
			return err
		}
		if err := tx.UpsertRun(ctx, "r", "p", 1, nil, t0); err != nil {
			return err
		}
		return boom
	})
	if err != boom {
		t.Fatalf("update: %v", err)
	}
	if ok, err := st.RunExists(ctx, "r", "p"); err != nil || ok {
		t.Errorf("a rolled-back run is visible: %v %v", ok, err)
	}
	// The rolled-back epoch is handed out again: nothing saw it.
	if e, err := st.NextEpoch(ctx); err != nil || e != 1 {
		t.Errorf("epoch after a rollback %d, %v", e, err)
	}
	// A statement's failure is a non-busy BackendError naming its op.
	err = st.Update(ctx, func(tx storage.Store) error {
		return tx.InsertReservation(ctx, storage.Step{ID: "s", Identity: storage.Identity{RunID: "none", PhaseID: "p", StepName: "n"},
			IdempotencyKey: "k", ReservedAt: t0, ExpiresAt: t0})
	})
	var be *storage.BackendError
	if !errors.As(err, &be) || be.Busy || be.Op != "insert reservation" {
		t.Errorf("foreign key violation: %v, want a non-busy BackendError", err)
	}
	if err := st.Ping(ctx); err != nil {
		t.Error(err)
	}
}
