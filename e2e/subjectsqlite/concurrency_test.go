package subjectsqlite

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

// Two plugin processes on one database each send 200 concurrent
// labels_add to the same subject: every label survives (each update is
// one BEGIN IMMEDIATE read-modify-write), and each process reads all 400.
func TestTwoProcessesConcurrentLabelsAddLoseNothing(t *testing.T) {
	p := newProject(t, nil)
	a, b := p.start(), p.start()
	s := create(t, a, "task/create", map[string]any{"title": "contended", "labels": []string{"seed"}})
	const per = 200
	var wg sync.WaitGroup
	errs := make(chan error, 2*per)
	for i, h := range []*fakehost.Host{a, b} {
		for j := range per {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := h.Call(e2etest.Ctx(t, time.Minute), "task/update",
					map[string]any{"id": s.ID, "patch": map[string]any{"labels_add": []string{fmt.Sprintf("p%d-%03d", i, j)}}})
				if err == nil && resp.Error != nil {
					err = resp.Error
				}
				if err != nil {
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("an update failed: %v", err)
	}
	for _, h := range []*fakehost.Host{a, b} {
		got := create(t, h, "task/get", map[string]string{"id": s.ID})
		if len(got.Labels) != 2*per+1 {
			t.Fatalf("%d labels after %d concurrent additions (+1 seed)", len(got.Labels), 2*per)
		}
		for i := range 2 {
			for j := range per {
				if !slices.Contains(got.Labels, fmt.Sprintf("p%d-%03d", i, j)) {
					t.Fatalf("label p%d-%03d lost", i, j)
				}
			}
		}
		// The label index agrees with the labels column.
		if l := list(t, h, "task/list", map[string]any{"labels_all": []string{"p0-000", "p1-199", "seed"}}); len(l.Subjects) != 1 {
			t.Fatalf("labels_all over the added labels found %d subjects", len(l.Subjects))
		}
	}
}

// Processes that start at the same moment on one database file all
// initialize: migrations run under BEGIN IMMEDIATE and the later ones find
// nothing to do. Both on a fresh file and on a database the Rust
// reference plugin created (schema_version 1, sqlite: ids).
func TestConcurrentStartupMigratesOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		rust bool
	}{{"fresh database", false}, {"Rust plugin database", true}} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, nil)
			if tc.rust {
				if err := p.mkdirDB(); err != nil {
					t.Fatal(err)
				}
				if out, err := tool(t, "rustdb", "-db", p.dbPath()).Output(); err != nil {
					t.Fatalf("rustdb: %v %s", err, out)
				}
			}
			cfg := e2etest.Config(t, binary, e2etest.Options{Dir: p.dir, Schemas: schemas(t), Declared: declaredEnv})
			hosts := make([]*fakehost.Host, 3)
			errs := make([]error, 3)
			var wg sync.WaitGroup
			for i := range hosts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					h, err := fakehost.Start(e2etest.Ctx(t, 30*time.Second), cfg)
					if err != nil {
						errs[i] = err
						return
					}
					hosts[i] = h
					_, errs[i] = h.Initialize(e2etest.Ctx(t, 30*time.Second), fakehost.Handshake{Preset: fakehost.PresetDaemon})
				}()
			}
			wg.Wait()
			for i, h := range hosts {
				if h != nil {
					t.Cleanup(func() { h.Close() })
				}
				if errs[i] != nil {
					t.Fatalf("process %d: %v\nstderr: %s", i, errs[i], h.Stderr())
				}
				if v := h.Violations(); len(v) > 0 {
					t.Fatalf("process %d: %v", i, v)
				}
			}
			for i, h := range hosts {
				create(t, h, "task/create", map[string]any{"title": fmt.Sprintf("from %d", i)})
			}
			want := 3
			if tc.rust {
				want = 5
			}
			for _, h := range hosts {
				if l := list(t, h, "task/list", nil); len(l.Subjects) != want {
					t.Fatalf("%d subjects, want %d", len(l.Subjects), want)
				}
			}
			if tc.rust {
				checkRustRows(t, hosts[0])
			}
		})
	}
}

// checkRustRows: the Rust plugin's rows read back with kind-qualified ids,
// legacy ids still resolve, timestamps keep their nanoseconds, and the
// parent link and the v0.1.1 fields survive.
func checkRustRows(t *testing.T, h *fakehost.Host) {
	t.Helper()
	parent := create(t, h, "task/get", map[string]string{"id": "sqlite:01HZZZ0000000000000000000A"})
	child := create(t, h, "task/get", map[string]string{"id": "01HZZZ0000000000000000000B"})
	if parent.ID != "task:01HZZZ0000000000000000000A" || parent.CreatedAt != "2026-05-13T13:55:00.123456789Z" ||
		*parent.Description != "from rust" || *parent.Priority != 2 || !slices.Equal(parent.Labels, []string{"backend", "P1"}) ||
		!slices.Equal(parent.Children, []string{child.ID}) {
		t.Fatalf("migrated parent: %+v", parent)
	}
	if *child.Parent != parent.ID || *child.NativeStatus != "In Review" || string(child.StatusMetadata) != `{"color":"#fff"}` ||
		len(child.Attachments) != 1 || child.UpdatedAt != "2026-05-13T13:55:02Z" {
		t.Fatalf("migrated child: %+v", child)
	}
	if l := list(t, h, "task/list", map[string]any{"labels_all": []string{"P1"}}); len(l.Subjects) != 1 {
		t.Fatalf("labels of migrated rows are not indexed: %v", ids(l))
	}
}
