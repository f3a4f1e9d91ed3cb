package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
)

// "Two hosts, one queue": two Animus 0.7 daemons on two machines (two
// project roots, two owner ids) share one animus-queue-postgres namespace.
// Every queue call is its own process, as the daemon runs a queue; each
// initialize reply passes the 0.7 gate before a queue/v2 method is sent.
// host-a enqueues three subjects (one with an idempotency key that host-b
// then replays), host-b leases two, host-a the third, host-a's CLI sees
// all three assigned, each daemon completes what it holds, and host-b's
// CLI sees an empty queue.

// PgHostsBinary is the plugin the scene drives.
const PgHostsBinary = "animus-queue-postgres"

// EnvPgDSN is where the demo and its test find PostgreSQL
// (scripts/postgres.sh run exports it).
const EnvPgDSN = "ANIMUS_PG_TEST_DSN"

// The plugin's settings the scene sets (plugins/queue-postgres).
const (
	pgEnvDSN      = "ANIMUS_QUEUE_PG_DSN"
	pgEnvSchema   = "ANIMUS_QUEUE_PG_SCHEMA"
	pgEnvLeaseTTL = "ANIMUS_QUEUE_LEASE_TTL_SECS"
	pgLeaseTTL    = "600"
)

// PgHostsOptions select where the scene runs.
type PgHostsOptions struct {
	DSN string // the PostgreSQL both daemons point at
	// Namespace is the ANIMUS_QUEUE_PG_SCHEMA (ANIMUS_SUBJECT_PG_SCHEMA
	// in RunPgSubjects) both use; empty means a fresh demo_<hex>, created
	// by the plugin and dropped at the end.
	Namespace string
}

// PgHostsResult is what the scene's calls answered. The test asserts on
// it; the demo narrates it.
type PgHostsResult struct {
	Namespace string
	Projects  map[string]string // host → project root
	Owners    map[string]string // host → owner id
	Gate      string            // the first gate verdict: crate, max_lease_batch

	Enqueued       []PgHostsEnqueued // host-a's three first enqueues, in order
	Replay         PgHostsEnqueued   // host-b's replay of the keyed one
	Leases         []PgHostsLease    // every entry handed out, by either host
	ListedAssigned map[string]string // host-a's queue/list: entry id → status
	StatsMid       PgHostsStats      // host-a's queue/stats after both leases
	Completions    []string          // queue/v2/completion outcomes, in order
	Final          PgHostsStats      // host-b's queue/stats at the end
	Calls          int               // queue calls, each in its own process

	Wire []string // every plugin process's full wire log, labelled
}

// PgHostsEnqueued is one queue/v2/enqueue answer.
type PgHostsEnqueued struct {
	Host      string
	Key       string // idempotency key sent, if any
	Enqueued  bool
	EntryID   string
	SubjectID string
}

// PgHostsLease is one entry leased through queue/v2/lease.
type PgHostsLease struct {
	Host       string // who asked
	Owner      string // owner_id in the fence it got
	EntryID    string
	SubjectID  string
	WorkflowID string
	Generation uint64 // lease generation
}

// PgHostsStats is queue/stats.
type PgHostsStats struct {
	Pending  int `json:"pending"`
	Assigned int `json:"assigned"`
	Deferred int `json:"deferred"`
	Held     int `json:"held"`
	Total    int `json:"total"`
}

func (s PgHostsStats) String() string {
	return fmt.Sprintf("pending %d, assigned %d, deferred %d, held %d, total %d", s.Pending, s.Assigned, s.Deferred, s.Held, s.Total)
}

// pgHost is one daemon: its machine's project root and owner id, and the
// fences its local projection holds.
type pgHost struct {
	name, project, owner string
	fences               []json.RawMessage
}

type pgScene struct {
	*Demo
	ctx      context.Context
	res      *PgHostsResult
	env      map[string]string
	declared []string
	a, b     *pgHost
}

// pgSubjects are the three pieces of work host-a files; the second
// carries the idempotency key (a GitHub webhook delivery) host-b replays.
var pgSubjects = []struct {
	sub storySubject
	key string
}{
	{storySubject{ID: "OPS-311", Title: "Rotate the staging TLS certificate"}, ""},
	{storySubject{ID: "OPS-312", Title: "Bump the Go toolchain to 1.26.1"}, "github:delivery:5d1e9c40-dead-beef"},
	{storySubject{ID: "OPS-313", Title: "Prune stale preview environments"}, ""},
}

// PgHostsDSN is the DSN the demo uses when none is given: $ANIMUS_PG_TEST_DSN.
func PgHostsDSN() string { return strings.TrimSpace(os.Getenv(EnvPgDSN)) }

// namespace checks o for the PostgreSQL scene named scene: it needs a
// DSN, and runs in o.Namespace, or in a fresh demo_… namespace (fresh)
// that the scene drops when it is done.
func (o PgHostsOptions) namespace(scene string) (ns string, fresh bool, err error) {
	if strings.TrimSpace(o.DSN) == "" {
		return "", false, errors.New(scene + ": no PostgreSQL DSN")
	}
	ns, fresh = o.Namespace, o.Namespace == ""
	if fresh {
		ns = "demo_" + randomHex(6)
	}
	return ns, fresh, pgkit.ValidSchema(ns)
}

// PgHostsSkipped is the one line the demo prints instead of the
// PostgreSQL scenes ("two hosts, one queue" and "two hosts, one task
// list") when it has no PostgreSQL.
func PgHostsSkipped(w io.Writer) {
	NewNarrator(w).Step("Scenes \"two hosts, one queue\" (animus-queue-postgres) and \"two hosts, one task list\" (animus-subject-postgres) skipped: no PostgreSQL; set %s or pass --pg-dsn (scripts/postgres.sh run -- … starts a throwaway one)", EnvPgDSN)
}

// RunPgHosts runs the scene "two hosts, one queue" against the binaries
// in binDir and narrates it to w.
func RunPgHosts(ctx context.Context, binDir string, w io.Writer, o PgHostsOptions) (*PgHostsResult, error) {
	ns, fresh, err := o.namespace("two hosts, one queue")
	if err != nil {
		return nil, err
	}
	schemas, err := schemacheck.Default()
	if err != nil {
		return nil, fmt.Errorf("schemas: %w", err)
	}
	n := NewNarrator(w)
	s := &pgScene{
		Demo: &Demo{Narrator: n, BinDir: binDir, Schemas: schemas, Daemon: fakehost.Daemon07},
		ctx:  ctx,
		res:  &PgHostsResult{Namespace: ns, Projects: map[string]string{}, Owners: map[string]string{}, ListedAssigned: map[string]string{}},
		env:  map[string]string{pgEnvDSN: o.DSN, pgEnvSchema: ns, pgEnvLeaseTTL: pgLeaseTTL},
	}
	n.Title(fmt.Sprintf("Two hosts, one queue: two Animus %s daemons share animus-queue-postgres", fakehost.Daemon07))
	start := time.Now()
	err = s.run()
	if err != nil && !strings.HasPrefix(err.Error(), "expectation failed") {
		s.Bad("%v", err)
	}
	err = errors.Join(err, s.finish(o.DSN, fresh))
	if err == nil {
		s.OK("%d queue calls in %d processes on two hosts (%v), each past the 0.7 gate (%s): 3 entries, each handed out once, all completed",
			s.res.Calls, s.res.Calls, time.Since(start).Round(time.Millisecond), s.res.Gate)
	}
	if err != nil {
		err = fmt.Errorf("two hosts, one queue: %w", err)
	}
	return s.res, err
}

func (s *pgScene) run() error {
	if err := s.setup(); err != nil {
		return err
	}
	for _, step := range []func() error{s.enqueue, s.replay, s.leaseB, s.leaseA, s.inspect, s.complete, s.final} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// setup probes the plugin and makes the two machines' project roots.
func (s *pgScene) setup() error {
	s.Step("0. Two machines, one database: each daemon has its own project root and owner id")
	m, err := fakehost.Probe(s.ctx, filepath.Join(s.BinDir, PgHostsBinary), fakehost.ProbeOptions{Schemas: s.Schemas})
	if err != nil {
		return fmt.Errorf("%s: %w (run make build)", PgHostsBinary, err)
	}
	if m.PluginKind != "queue" {
		return fmt.Errorf("%s: plugin_kind %q, want queue", PgHostsBinary, m.PluginKind)
	}
	s.declared = m.EnvNames()
	s.OK("%s %s: %s, %d capabilities, %d env vars declared", m.Name, m.Version, m.PluginKind, len(m.Capabilities), len(m.EnvRequired))
	for _, name := range []string{"host-a", "host-b"} {
		dir, err := newPgProject(name)
		if err != nil {
			return err
		}
		h := &pgHost{name: name, project: dir, owner: "daemon-" + name + "-" + randomHex(4)}
		if name == "host-a" {
			s.a = h
		} else {
			s.b = h
		}
		s.res.Projects[name], s.res.Owners[name] = h.project, h.owner
		s.Say("%s: project %s, owner %s", name, h.project, h.owner)
	}
	s.Say("Both: the same %s (sensitive, not shown), %s=%s (created by the plugin on first use), %s=%s",
		pgEnvDSN, pgEnvSchema, s.res.Namespace, pgEnvLeaseTTL, pgLeaseTTL)
	s.Say("Every call below is its own process, as the daemon runs a queue: initialize (0.7 queue client, project_binding) →")
	s.Say("the gate (require_generation_fenced_queue) → one queue/v2 or CLI method → shutdown → exit. Only the method's frames are shown.")
	return nil
}

// enqueue: host-a files three dispatches, the second with an idempotency key.
func (s *pgScene) enqueue() error {
	s.Step("1. host-a enqueues three subjects with queue/v2/enqueue (OPS-312 carries its webhook delivery as idempotency key)")
	for _, p := range pgSubjects {
		e, err := s.enqueueCall(s.a, p.sub, p.key)
		if err != nil {
			return err
		}
		s.res.Enqueued = append(s.res.Enqueued, e)
	}
	ids := map[string]bool{}
	for _, e := range s.res.Enqueued {
		ids[e.EntryID] = e.Enqueued
	}
	return s.Expect(len(ids) == 3 && !ids[""] && allTrue(ids), "three new entries: %s", enqueuedText(s.res.Enqueued))
}

// replay: host-b receives the same webhook delivery (the sender retried
// against the other machine) and sends the same key.
func (s *pgScene) replay() error {
	s.Step("2. The webhook is redelivered to host-b: it sends queue/v2/enqueue with the same idempotency key")
	keyed := s.res.Enqueued[1]
	e, err := s.enqueueCall(s.b, pgSubjects[1].sub, pgSubjects[1].key)
	if err != nil {
		return err
	}
	s.res.Replay = e
	return s.Expect(!e.Enqueued && e.EntryID == keyed.EntryID && e.SubjectID == keyed.SubjectID,
		"enqueued:false, host-a's entry %s (subject %s) returned: the key is remembered in the shared queue", e.EntryID, e.SubjectID)
}

// leaseB: host-b's dispatch tick has two free slots.
func (s *pgScene) leaseB() error {
	s.Step("3. host-b's dispatch tick: queue/v2/lease max 2 as %s", s.b.owner)
	got, err := s.leaseCall(s.b, 2)
	if err != nil {
		return err
	}
	want := []string{s.res.Enqueued[0].EntryID, s.res.Enqueued[1].EntryID}
	return s.Expect(len(got) == 2 && got[0].EntryID == want[0] && got[1].EntryID == want[1] && ownedBy(got, s.b.owner),
		"host-b holds %s: the first two in line, its owner id in each fence", leasesText(got))
}

// leaseA: host-a's tick asks for two; only the third is left.
func (s *pgScene) leaseA() error {
	s.Step("4. host-a's dispatch tick: queue/v2/lease max 2 as %s; host-b's entries are taken", s.a.owner)
	got, err := s.leaseCall(s.a, 2)
	if err != nil {
		return err
	}
	return s.Expect(len(got) == 1 && got[0].EntryID == s.res.Enqueued[2].EntryID && ownedBy(got, s.a.owner),
		"host-a holds %s: the only entry left, nothing handed out twice", leasesText(got))
}

// inspect: host-a's CLI counts and lists the shared queue.
func (s *pgScene) inspect() error {
	s.Step("5. On host-a, `animus queue stats` and `animus queue list` (old-style queue/stats {}, queue/list {}) see the whole shared queue")
	if err := s.stats(s.a, &s.res.StatsMid); err != nil {
		return err
	}
	r, err := s.call(s.a, "queue/list", map[string]any{})
	if err != nil {
		return err
	}
	var list struct {
		Entries []struct {
			EntryID string `json:"entry_id"`
			Status  string `json:"status"`
		} `json:"entries"`
	}
	if r.Error != nil || json.Unmarshal(r.Result, &list) != nil {
		return fmt.Errorf("queue/list: %s", r.Raw)
	}
	assigned := 0
	for _, e := range list.Entries {
		s.res.ListedAssigned[e.EntryID] = e.Status
		if e.Status == "assigned" {
			assigned++
		}
	}
	st := s.res.StatsMid
	return s.Expect(st.Assigned == 3 && st.Pending == 0 && st.Total == 3 && len(list.Entries) == 3 && assigned == 3,
		"stats: %s; list: %d entries, %d assigned (two of them to host-b)", st, len(list.Entries), assigned)
}

// complete: each daemon completes the tickets it holds.
func (s *pgScene) complete() error {
	s.Step("6. The runs finish: each daemon sends queue/v2/completion with the fences it holds")
	for _, h := range []*pgHost{s.b, s.a} {
		for _, f := range h.fences {
			m, err := s.mutate(h, "queue/v2/completion", map[string]any{"execution": f, "status": "completed", "workflow_ref": "standard"})
			if err != nil {
				return err
			}
			s.res.Completions = append(s.res.Completions, m.Outcome)
		}
		h.fences = nil
	}
	ok := len(s.res.Completions) == 3
	for _, o := range s.res.Completions {
		ok = ok && o == "applied"
	}
	return s.Expect(ok, "completions: %s (host-b ×2, host-a ×1)", strings.Join(s.res.Completions, ", "))
}

// final: host-b's CLI sees the queue empty.
func (s *pgScene) final() error {
	s.Step("7. On host-b, `animus queue stats`: the shared queue is empty")
	if err := s.stats(s.b, &s.res.Final); err != nil {
		return err
	}
	f := s.res.Final
	return s.Expect(f == PgHostsStats{}, "stats: %s", f)
}

// enqueueCall sends queue/v2/enqueue from h, with key when not empty.
func (s *pgScene) enqueueCall(h *pgHost, sub storySubject, key string) (PgHostsEnqueued, error) {
	params := map[string]any{"subject_dispatch": storyDispatch(sub, "webhook:github", "standard")}
	if key != "" {
		params["idempotency_key"] = key
	}
	r, err := s.call(h, "queue/v2/enqueue", params)
	if err != nil {
		return PgHostsEnqueued{}, err
	}
	var e v2Enqueued
	if r.Error != nil || json.Unmarshal(r.Result, &e) != nil || e.EntryID == "" {
		return PgHostsEnqueued{}, fmt.Errorf("queue/v2/enqueue: %s", r.Raw)
	}
	return PgHostsEnqueued{Host: h.name, Key: key, Enqueued: e.Enqueued, EntryID: e.EntryID, SubjectID: e.Subject.QualifiedID}, nil
}

// leaseCall is one dispatch tick of h: max fresh workflow ids, the fences
// h holds in exclude (omitted when none). The fences it gets are kept.
func (s *pgScene) leaseCall(h *pgHost, max int) ([]PgHostsLease, error) {
	var ids []string
	for range max {
		ids = append(ids, "wf-"+strings.TrimPrefix(h.name, "host-")+"-"+randomHex(4))
	}
	params := map[string]any{"max": max, "owner_id": h.owner, "workflow_ids": ids}
	if len(h.fences) > 0 {
		params["exclude"] = h.fences
	}
	r, err := s.call(h, "queue/v2/lease", params)
	if err != nil {
		return nil, err
	}
	var out v2Leased
	if r.Error != nil || json.Unmarshal(r.Result, &out) != nil {
		return nil, fmt.Errorf("queue/v2/lease: %s", r.Raw)
	}
	var got []PgHostsLease
	for _, l := range out.Leased {
		var f wireFence
		if err := json.Unmarshal(l.Execution, &f); err != nil {
			return nil, fmt.Errorf("queue/v2/lease: fence: %w", err)
		}
		h.fences = append(h.fences, l.Execution)
		got = append(got, PgHostsLease{Host: h.name, Owner: f.QueueLease.OwnerID, EntryID: l.Entry.EntryID,
			SubjectID: l.Entry.SubjectID, WorkflowID: l.Entry.WorkflowID, Generation: f.QueueLease.Generation})
	}
	s.res.Leases = append(s.res.Leases, got...)
	return got, nil
}

func (s *pgScene) stats(h *pgHost, into *PgHostsStats) error {
	r, err := s.call(h, "queue/stats", map[string]any{})
	if err != nil {
		return err
	}
	if r.Error != nil || json.Unmarshal(r.Result, into) != nil {
		return fmt.Errorf("queue/stats: %s", r.Raw)
	}
	return nil
}

func (s *pgScene) mutate(h *pgHost, method string, params map[string]any) (v2Mutation, error) {
	var m v2Mutation
	r, err := s.call(h, method, params)
	if err != nil {
		return m, err
	}
	if r.Error != nil || json.Unmarshal(r.Result, &m) != nil || m.Outcome == "" {
		return m, fmt.Errorf("%s: %s", method, r.Raw)
	}
	return m, nil
}

// call runs one queue call as h's daemon does: a fresh process in h's
// project root with the daemon's narrow environment plus the declared
// settings, the 0.7 queue client's initialize, the gate before any
// queue/v2 method, the method, then shutdown and exit.
func (s *pgScene) call(h *pgHost, method string, params any) (*fakehost.Response, error) {
	p, err := s.Spawn(s.ctx, PgHostsBinary, func(c *fakehost.Config) {
		c.Dir, c.Declared, c.EnvMode, c.Env = h.project, s.declared, fakehost.EnvDaemonNarrow, s.env
	})
	if err != nil {
		return nil, err
	}
	s.Name(p, h.name+"/queue-postgres")
	res, err := p.Initialize(s.ctx, fakehost.Handshake{Preset: fakehost.PresetQueueClient})
	if err != nil {
		return nil, fmt.Errorf("%s: initialize: %w", h.name, err)
	}
	if strings.HasPrefix(method, "queue/v2/") {
		caps, err := conformance.RequireGenerationFencedQueue(res)
		if err != nil {
			return nil, fmt.Errorf("%s not sent by %s: %w", method, h.name, err)
		}
		if s.res.Gate == "" {
			s.res.Gate = fmt.Sprintf("crate %s, max_lease_batch %d", res.KindCapabilities["queue"].CrateVersion, caps.MaxLeaseBatch)
		}
	}
	_, s.seen[p] = p.WireLines(0) // show the method's frames only
	s.res.Calls++
	resp, err := s.Call(s.ctx, p, method, params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", h.name, err)
	}
	rep, err := p.Shutdown(s.ctx, fakehost.LadderDaemon)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: shutdown: %w", h.name, method, err)
	}
	if !rep.ExitedByItself || rep.ExitCode != 0 {
		return nil, fmt.Errorf("%s: %s: the process did not exit by itself after shutdown/exit", h.name, method)
	}
	return resp, nil
}

// finish collects the wire logs, checks for wire violations, removes the
// project roots and drops the namespace when the scene made it up.
func (s *pgScene) finish(dsn string, dropNamespace bool) error {
	var projects []string
	for _, h := range []*pgHost{s.a, s.b} {
		if h != nil {
			projects = append(projects, h.project)
		}
	}
	return s.finishPg(s.ctx, &s.res.Wire, projects, dsn, s.res.Namespace, dropNamespace)
}

// finishPg ends a two-hosts scene: every plugin process's wire log,
// labelled, into wire; wire violations checked; the project roots removed;
// the namespace dropped when the scene made it up.
func (d *Demo) finishPg(ctx context.Context, wire *[]string, projects []string, dsn, ns string, dropNamespace bool) error {
	var errs []error
	for _, h := range d.hosts {
		*wire = append(*wire, fmt.Sprintf("── %s (pid %d)\n%s", d.names[h], h.Pid(), h.WireLog()))
	}
	if err := d.close(); err != nil {
		d.Bad("%v", err)
		errs = append(errs, err)
	}
	for _, p := range projects {
		os.RemoveAll(p)
	}
	if dropNamespace {
		if err := dropSchema(ctx, dsn, ns); err != nil {
			d.Bad("dropping the namespace %s: %v", ns, err)
			errs = append(errs, err)
		} else {
			d.Say("The namespace %s, made up for this run, is dropped again", ns)
		}
	}
	return errors.Join(errs...)
}

// newPgProject makes one machine's project root (canonical path; the
// caller removes it).
func newPgProject(host string) (string, error) {
	dir, err := os.MkdirTemp("", "animus-"+host+"-*")
	if err != nil {
		return "", err
	}
	canon, err := filepath.EvalSymlinks(dir)
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return canon, nil
}

// dropSchema removes the scene's namespace (a validated plain identifier).
func dropSchema(ctx context.Context, dsn, schema string) error {
	db, err := pgkit.Open(pgkit.Options{DSN: dsn, Schema: schema, AppName: "animus-demo"})
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	pool, err := db.Pool(ctx)
	if err != nil {
		return err
	}
	_, err = pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
	return err
}

func allTrue(m map[string]bool) bool {
	for _, v := range m {
		if !v {
			return false
		}
	}
	return true
}

func ownedBy(ls []PgHostsLease, owner string) bool {
	for _, l := range ls {
		if l.Owner != owner {
			return false
		}
	}
	return true
}

func enqueuedText(es []PgHostsEnqueued) string {
	var out []string
	for _, e := range es {
		out = append(out, e.EntryID+" ("+e.SubjectID+")")
	}
	return strings.Join(out, ", ")
}

func leasesText(ls []PgHostsLease) string {
	var out []string
	for _, l := range ls {
		out = append(out, fmt.Sprintf("%s (%s) as %s, lease generation %d", l.EntryID, l.SubjectID, l.WorkflowID, l.Generation))
	}
	return strings.Join(out, "; ")
}
