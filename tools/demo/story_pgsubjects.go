package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// "Two hosts, one task list": two Animus 0.7 daemons on two machines (two
// project roots) share one animus-subject-postgres namespace. Each daemon
// holds one long-lived plugin process, as the subject router does; every
// CLI command is its own short-lived process. host-b's daemon watches;
// host-a's CLI creates two tasks, host-a's daemon moves the first to
// in-progress, host-b's CLI labels the second, and host-b's watch shows
// each change live, in commit order. Both hosts end listing the same two
// tasks, each with the other machine's label.

// PgSubjectsBinary is the plugin the scene drives.
const PgSubjectsBinary = "animus-subject-postgres"

// The plugin's settings the scene sets (plugins/subject-postgres).
const (
	pgSubjEnvDSN    = "ANIMUS_SUBJECT_PG_DSN"
	pgSubjEnvSchema = "ANIMUS_SUBJECT_PG_SCHEMA"
	pgSubjEnvKinds  = "ANIMUS_SUBJECT_PG_KINDS"
)

// The labels each machine adds, and the watch's request id.
const (
	PgSubjectsLabelA = "picked-up:host-a"
	PgSubjectsLabelB = "needs-review"
	pgSubjWatchID    = "700"
)

// PgSubjectsResult is what the scene's calls answered. The test asserts
// on it; the demo narrates it.
type PgSubjectsResult struct {
	Namespace string
	Projects  map[string]string // host → project root
	Daemons   map[string]int    // host → pid of its daemon's long-lived process
	Watching  bool              // host-b's subject/watch was acknowledged
	Created   []PgSubjectsTask  // host-a's CLI's two task/create answers
	Events    []PgSubjectsEvent // host-b's watch, in arrival order
	ListedA   []PgSubjectsTask  // host-a's daemon's task/list after host-b's label
	ListedB   []PgSubjectsTask  // host-b's CLI's task/list at the end
	CLICalls  int               // CLI commands, each in its own process

	Wire []string // every plugin process's full wire log, labelled
}

// PgSubjectsTask is the part of a Subject the scene looks at.
type PgSubjectsTask struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Status   string   `json:"status"`
	Assignee string   `json:"assignee"`
	Labels   []string `json:"labels"`
}

func (t PgSubjectsTask) String() string {
	s := fmt.Sprintf("%s %q %s", t.ID, t.Title, t.Status)
	if t.Assignee != "" {
		s += " @" + t.Assignee
	}
	return s + fmt.Sprintf(" %v", t.Labels)
}

// PgSubjectsEvent is one subject/changed on host-b's watch.
type PgSubjectsEvent struct {
	Kind    string         // change_kind
	Subject PgSubjectsTask // the subject as the change left it
	Host    string         // the machine whose call caused it
	Caller  string         // "daemon" or "CLI"
	Lag     time.Duration  // from that call's answer to the event (negative: the event came first)
}

// pgSubjHost is one machine: its project root and its daemon's process.
type pgSubjHost struct {
	name, project string
	daemon        *fakehost.Host
}

type pgSubjScene struct {
	*Demo
	ctx      context.Context
	res      *PgSubjectsResult
	env      map[string]string
	declared []string
	a, b     *pgSubjHost
}

// RunPgSubjects runs the scene "two hosts, one task list" against the
// binaries in binDir and narrates it to w.
func RunPgSubjects(ctx context.Context, binDir string, w io.Writer, o PgHostsOptions) (*PgSubjectsResult, error) {
	ns, fresh, err := o.namespace("two hosts, one task list")
	if err != nil {
		return nil, err
	}
	schemas, err := schemacheck.Default()
	if err != nil {
		return nil, fmt.Errorf("schemas: %w", err)
	}
	n := NewNarrator(w)
	s := &pgSubjScene{
		Demo: &Demo{Narrator: n, BinDir: binDir, Schemas: schemas, Daemon: fakehost.Daemon07},
		ctx:  ctx,
		res:  &PgSubjectsResult{Namespace: ns, Projects: map[string]string{}, Daemons: map[string]int{}},
		env:  map[string]string{pgSubjEnvDSN: o.DSN, pgSubjEnvSchema: ns, pgSubjEnvKinds: "task"},
	}
	n.Title(fmt.Sprintf("Two hosts, one task list: two Animus %s daemons share animus-subject-postgres", fakehost.Daemon07))
	start := time.Now()
	err = s.run()
	if err != nil && !strings.HasPrefix(err.Error(), "expectation failed") {
		s.Bad("%v", err)
	}
	var projects []string
	for _, h := range []*pgSubjHost{s.a, s.b} {
		if h != nil {
			projects = append(projects, h.project)
		}
	}
	err = errors.Join(err, s.finishPg(ctx, &s.res.Wire, projects, o.DSN, ns, fresh))
	if err == nil {
		s.OK("%d changes from two hosts on host-b's watch in commit order; both list the same %d tasks (%d CLI processes, 2 daemons, %v)",
			len(s.res.Events), len(s.res.ListedB), s.res.CLICalls, time.Since(start).Round(time.Millisecond))
	}
	if err != nil {
		err = fmt.Errorf("two hosts, one task list: %w", err)
	}
	return s.res, err
}

func (s *pgSubjScene) run() error {
	for _, step := range []func() error{s.setup, s.daemons, s.watch, s.create, s.pickUp, s.label, s.listA, s.listB, s.stop} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// setup probes the plugin and makes the two machines' project roots.
func (s *pgSubjScene) setup() error {
	s.Step("0. Two machines, one database: each has its own project root; one namespace holds the task list")
	m, err := fakehost.Probe(s.ctx, filepath.Join(s.BinDir, PgSubjectsBinary), fakehost.ProbeOptions{Schemas: s.Schemas})
	if err != nil {
		return fmt.Errorf("%s: %w (run make build)", PgSubjectsBinary, err)
	}
	if m.PluginKind != "subject_backend" || !subjectHas(m.Capabilities, "subject_kind:task") || !subjectHas(m.Capabilities, "subject/watch") {
		return fmt.Errorf("%s: plugin_kind %q, capabilities %v: want a subject_backend serving task with subject/watch", PgSubjectsBinary, m.PluginKind, m.Capabilities)
	}
	s.declared = m.EnvNames()
	s.OK("%s %s: %s, %d capabilities (subject_kind:task), %d env vars declared", m.Name, m.Version, m.PluginKind, len(m.Capabilities), len(m.EnvRequired))
	s.a, s.b = &pgSubjHost{name: "host-a"}, &pgSubjHost{name: "host-b"}
	for _, h := range []*pgSubjHost{s.a, s.b} {
		if h.project, err = newPgProject(h.name); err != nil {
			return err
		}
		s.res.Projects[h.name] = h.project
		s.Say("%s: project %s", h.name, h.project)
	}
	s.Say("Both: the same %s (sensitive, not shown), %s=%s (created by the plugin on first use), %s=task",
		pgSubjEnvDSN, pgSubjEnvSchema, s.res.Namespace, pgSubjEnvKinds)
	s.Say("A CLI command is its own process: spawn → initialize → one method → shutdown → exit. Only the methods' frames are shown.")
	return nil
}

// daemons: each daemon spawns its subject backend once and keeps it.
func (s *pgSubjScene) daemons() error {
	s.Step("1. Each daemon's subject router spawns animus-subject-postgres in its project root and keeps it running")
	for _, h := range []*pgSubjHost{s.a, s.b} {
		p, res, err := s.spawn(h, "daemon")
		if err != nil {
			return err
		}
		h.daemon = p
		s.res.Daemons[h.name] = p.Pid()
		s.Say("%s/daemon: pid %d, initialize answered (protocol %s)", h.name, p.Pid(), res.ProtocolVersion)
	}
	return nil
}

// watch: host-b's daemon subscribes, as the daemon does for its kinds.
func (s *pgSubjScene) watch() error {
	s.Step("2. host-b's daemon opens subject/watch {\"kind\":\"task\"} (request id %s) and keeps it open", pgSubjWatchID)
	ctx, cancel := context.WithTimeout(s.ctx, 20*time.Second)
	defer cancel()
	resp, err := s.b.daemon.Request(ctx, json.RawMessage(pgSubjWatchID), "subject/watch", map[string]any{"kind": "task"})
	s.Frames(s.b.daemon)
	if err != nil {
		return fmt.Errorf("host-b: subject/watch: %w", err)
	}
	s.res.Watching = resp.Error == nil && string(resp.Result) == `{"watching":true}`
	return s.Expect(s.res.Watching, "watching: every commit to %s, from any host, will reach this process", s.res.Namespace)
}

// create: host-a's CLI files two tasks, one process each.
func (s *pgSubjScene) create() error {
	s.Step("3. On host-a, `animus task create` twice: task/create, each in its own process")
	for _, c := range []map[string]any{
		{"title": "Move the nightly backup to the new bucket", "priority": "high", "labels": []string{"ops"}},
		{"title": "Review the on-call runbook", "labels": []string{"docs"}},
	} {
		var t PgSubjectsTask
		resp, err := s.cli(s.a, "task/create", c, &t)
		if err != nil {
			return err
		}
		s.res.Created = append(s.res.Created, t)
		if err := s.event(s.a, "CLI", resp, "created", t.ID); err != nil {
			return err
		}
	}
	return nil
}

// pickUp: host-a's daemon takes the first task.
func (s *pgSubjScene) pickUp() error {
	first := s.res.Created[0]
	s.Step("4. host-a's daemon picks up %s: task/update status in_progress, an assignee and the label %s", first.ID, PgSubjectsLabelA)
	var t PgSubjectsTask
	resp, err := s.CallInto(s.ctx, s.a.daemon, "task/update", map[string]any{"id": first.ID, "patch": map[string]any{
		"status": "in_progress", "assignee": "wf-a-7", "labels_add": []string{PgSubjectsLabelA}, "comment": "dispatched on host-a"}}, &t)
	if err != nil {
		return fmt.Errorf("host-a's daemon: %w", err)
	}
	if err := s.Expect(t.Status == "in-progress" && t.Assignee == "wf-a-7" && slices.Contains(t.Labels, PgSubjectsLabelA), "answer: %s", t); err != nil {
		return err
	}
	return s.event(s.a, "daemon", resp, "status-changed", first.ID)
}

// label: someone on host-b labels the other task while host-a's daemon
// works on the first.
func (s *pgSubjScene) label() error {
	second := s.res.Created[1]
	s.Step("5. On host-b, while host-a's daemon works on the first, `animus task update` labels %s %s: labels_add from the other machine", second.ID, PgSubjectsLabelB)
	var t PgSubjectsTask
	resp, err := s.cli(s.b, "task/update", map[string]any{"id": second.ID, "patch": map[string]any{"labels_add": []string{PgSubjectsLabelB}}}, &t)
	if err != nil {
		return err
	}
	if err := s.Expect(slices.Contains(t.Labels, PgSubjectsLabelB) && t.Status == "ready", "answer: %s", t); err != nil {
		return err
	}
	return s.event(s.b, "CLI", resp, "updated", second.ID)
}

// listA: host-a's daemon polls its list, as the daemon does.
func (s *pgSubjScene) listA() error {
	s.Step("6. host-a's daemon lists ready and in-progress tasks ({filter:{…}}, the daemon's shape): host-b's label is there")
	var out pgSubjList
	if err := s.Result(s.ctx, s.a.daemon, "task/list", map[string]any{"filter": map[string]any{"status": []string{"ready", "in-progress"}}}, &out); err != nil {
		return fmt.Errorf("host-a's daemon: %w", err)
	}
	list := out.Subjects
	s.res.ListedA = list
	i := slices.IndexFunc(list, func(t PgSubjectsTask) bool { return t.ID == s.res.Created[1].ID })
	return s.Expect(len(list) == 2 && out.Total == 2 && i >= 0 && slices.Contains(list[i].Labels, PgSubjectsLabelB), "%d tasks: %s", len(list), tasksText(list))
}

// listB: host-b's CLI lists the same; both machines agree.
func (s *pgSubjScene) listB() error {
	s.Step("7. On host-b, `animus task list` (a bare filter, status in_progress spelled the CLI's way): the same two tasks")
	var out pgSubjList
	if _, err := s.cli(s.b, "task/list", map[string]any{"status": []string{"ready", "in_progress"}, "limit": 50}, &out); err != nil {
		return err
	}
	s.res.ListedB = out.Subjects
	return s.Expect(out.Total == 2 && slices.EqualFunc(s.res.ListedA, s.res.ListedB, sameTask), "host-b lists exactly what host-a lists: %s", tasksText(out.Subjects))
}

// stop: nothing more arrived on the watch; the daemons stop their plugins.
func (s *pgSubjScene) stop() error {
	s.Step("8. host-b's watch saw exactly those changes; the daemons' shutdown ladder, host-b's watch still open")
	var kinds []string
	for _, e := range s.res.Events {
		kinds = append(kinds, e.Kind)
	}
	got := 0
	for _, n := range s.b.daemon.Notifications() {
		if _, ok := pgSubjChange(n); ok {
			got++
		}
	}
	if err := s.Expect(got == len(s.res.Events), "%d events, in commit order: %s", len(s.res.Events), strings.Join(kinds, ", ")); err != nil {
		return err
	}
	for _, h := range []*pgSubjHost{s.a, s.b} {
		rep, err := h.daemon.Shutdown(s.ctx, fakehost.LadderDaemon)
		if err != nil {
			return fmt.Errorf("%s/daemon: shutdown: %w", h.name, err)
		}
		if err := s.Expect(rep.ExitedByItself && rep.ExitCode == 0, "%s/daemon exited by itself with code 0, %v after shutdown", h.name, rep.Elapsed.Round(time.Millisecond)); err != nil {
			return err
		}
	}
	return nil
}

// event waits for the next subject/changed on host-b's watch, which resp
// (from a call by h's caller) caused, and narrates it.
func (s *pgSubjScene) event(h *pgSubjHost, caller string, resp *fakehost.Response, kind, id string) error {
	want := len(s.res.Events) + 1
	ctx, cancel := context.WithTimeout(s.ctx, 20*time.Second)
	defer cancel()
	seen := 0
	n, err := s.b.daemon.WaitNotification(ctx, func(n fakehost.Notification) bool {
		if _, ok := pgSubjChange(n); ok {
			seen++
		}
		return seen == want
	})
	s.Frames(s.b.daemon)
	if err != nil {
		return fmt.Errorf("host-b's watch: no event for %s's %s call: %w", h.name, caller, err)
	}
	ev, _ := pgSubjChange(n)
	ev.Host, ev.Caller, ev.Lag = h.name, caller, n.At.Sub(resp.At)
	s.res.Events = append(s.res.Events, ev)
	when := fmt.Sprintf("%v after the answer", ev.Lag.Round(10*time.Microsecond))
	if ev.Lag < 0 {
		when = fmt.Sprintf("%v before the answer reached %s", (-ev.Lag).Round(10*time.Microsecond), h.name)
	}
	return s.Expect(ev.Kind == kind && ev.Subject.ID == id, "host-b's watch: %s %s, caused by %s's %s, %s", ev.Kind, ev.Subject.ID, h.name, caller, when)
}

// spawn starts h's plugin process as its daemon (or CLI) does and
// initializes it as the 0.7 subject router.
func (s *pgSubjScene) spawn(h *pgSubjHost, role string) (*fakehost.Host, *fakehost.InitializeResult, error) {
	p, err := s.Spawn(s.ctx, PgSubjectsBinary, func(c *fakehost.Config) {
		c.Dir, c.Declared, c.Env = h.project, s.declared, s.env
	})
	if err != nil {
		return nil, nil, err
	}
	s.Name(p, h.name+"/"+role)
	res, err := p.Initialize(s.ctx, s.Daemon.Handshake("subject_backend"))
	if err != nil {
		return nil, nil, fmt.Errorf("%s/%s: initialize: %w", h.name, role, err)
	}
	_, s.seen[p] = p.WireLines(0) // show the methods' frames only
	return p, res, nil
}

// cli runs one CLI command on h: its own process, one call, shutdown, exit.
func (s *pgSubjScene) cli(h *pgSubjHost, method string, params, out any) (*fakehost.Response, error) {
	p, _, err := s.spawn(h, "cli")
	if err != nil {
		return nil, err
	}
	s.res.CLICalls++
	resp, err := s.CallInto(s.ctx, p, method, params, out)
	if err != nil {
		return nil, fmt.Errorf("%s's CLI: %w", h.name, err)
	}
	rep, err := p.Shutdown(s.ctx, fakehost.LadderDaemon)
	if err != nil {
		return nil, fmt.Errorf("%s's CLI: %s: shutdown: %w", h.name, method, err)
	}
	if !rep.ExitedByItself || rep.ExitCode != 0 {
		return nil, fmt.Errorf("%s's CLI: %s: the process did not exit by itself after shutdown/exit", h.name, method)
	}
	return resp, nil
}

type pgSubjList struct {
	Subjects []PgSubjectsTask `json:"subjects"`
	Total    int              `json:"total"`
}

// pgSubjChange decodes n when it is a subject/changed for the scene's watch.
func pgSubjChange(n fakehost.Notification) (PgSubjectsEvent, bool) {
	var p struct {
		ID    json.RawMessage `json:"id"`
		Event struct {
			ChangeKind string         `json:"change_kind"`
			Subject    PgSubjectsTask `json:"subject"`
		} `json:"event"`
	}
	if n.Method != "subject/changed" || json.Unmarshal(n.Params, &p) != nil || string(p.ID) != pgSubjWatchID {
		return PgSubjectsEvent{}, false
	}
	return PgSubjectsEvent{Kind: p.Event.ChangeKind, Subject: p.Event.Subject}, true
}

func sameTask(a, b PgSubjectsTask) bool {
	return a.ID == b.ID && a.Title == b.Title && a.Status == b.Status && a.Assignee == b.Assignee && slices.Equal(a.Labels, b.Labels)
}

func tasksText(ts []PgSubjectsTask) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.String())
	}
	return strings.Join(out, "; ")
}
