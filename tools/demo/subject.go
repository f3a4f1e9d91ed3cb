package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// subjectScript walks animus-subject-sqlite through a day of a task
// tracker shared by two processes, as Animus runs it: the daemon's
// long-lived process watches, a CLI process writes to the same SQLite
// file, and every write shows up on the daemon's watch in order.
func subjectScript() Script {
	return Script{
		Binary: "animus-subject-sqlite",
		Kind:   "subject_backend",
		Title:  "animus-subject-sqlite: a shared task tracker with a cross-process watch",
		Run:    runSubject,
	}
}

type demoSubject struct {
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Status      string   `json:"status"`
	Priority    int      `json:"priority"`
	Labels      []string `json:"labels"`
}

func runSubject(ctx context.Context, d *Demo) (string, error) {
	project, err := os.MkdirTemp("", "subject-demo-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(project)
	bin := d.BinDir + "/animus-subject-sqlite"

	d.Step("Discovery: the manifest names the kinds the daemon routes here (subject_kind:task)")
	m, err := fakehost.Probe(ctx, bin, fakehost.ProbeOptions{Schemas: d.Schemas})
	if err != nil {
		return "", err
	}
	if err := d.Expect(subjectHas(m.Capabilities, "subject_kind:task") && subjectHas(m.Capabilities, "task/create"),
		"%d capabilities, %d env vars declared", len(m.Capabilities), len(m.EnvRequired)); err != nil {
		return "", err
	}

	d.Step("Two processes on one database: the daemon's (A) and a CLI command's (B)")
	env := map[string]string{"ANIMUS_SQLITE_WATCH_POLL_MS": "50"}
	spawn := func() (*fakehost.Host, error) {
		h, err := d.Spawn(ctx, "animus-subject-sqlite", func(c *fakehost.Config) { c.Dir, c.Env = project, env })
		if err != nil {
			return nil, err
		}
		_, err = h.Initialize(ctx, fakehost.Handshake{Preset: fakehost.PresetDaemon})
		d.Frames(h)
		return h, err
	}
	a, err := spawn()
	if err != nil {
		return "", err
	}
	b, err := spawn()
	if err != nil {
		return "", err
	}

	d.Step("A: subject/watch, as the daemon sends it (no params)")
	resp, err := a.Request(ctx, json.RawMessage(`500`), "subject/watch", nil)
	d.Frames(a)
	if err != nil {
		return "", err
	}
	if err := d.Expect(resp.Error == nil && string(resp.Result) == `{"watching":true}`, "watching"); err != nil {
		return "", err
	}

	d.Step("B: `animus subject create` sends task/create with a string priority and labels")
	var s demoSubject
	if err := d.Result(ctx, b, "task/create", map[string]any{"title": "Ship the SQLite backend", "body": "See the issue.", "priority": "high", "labels": []string{"backend"}}, &s); err != nil {
		return "", err
	}
	if err := d.Expect(s.Priority == 3 && s.Status == "ready", "a bare Subject, id %s, priority high → 3", s.ID); err != nil {
		return "", err
	}

	d.Step("B: labels_add and a comment; then the status, with the CLI's spelling in_progress")
	if err := d.Result(ctx, b, "task/update", map[string]any{"id": s.ID, "patch": map[string]any{"labels_add": []string{"p1"}, "comment": "picked up by wf-7"}}, &s); err != nil {
		return "", err
	}
	if err := d.Expect(len(s.Labels) == 2 && s.Description == "See the issue.", "labels %v; the comment went to the log, the description is intact", s.Labels); err != nil {
		return "", err
	}
	if err := d.Result(ctx, b, "task/status", map[string]any{"id": s.ID, "status": "in_progress"}, &s); err != nil {
		return "", err
	}

	d.Step("A: B's writes arrive on A's watch, in commit order, carrying watch id 500")
	var kinds []string
	deadline := time.Now().Add(5 * time.Second)
	for len(kinds) < 3 && time.Now().Before(deadline) {
		kinds = watchKinds(a)
		time.Sleep(20 * time.Millisecond)
	}
	d.Frames(a)
	if err := d.Expect(fmt.Sprint(kinds) == "[created updated status-changed]", "subject/changed: %v", kinds); err != nil {
		return "", err
	}

	d.Step("A: the daemon's list shape {filter:{…}} and B's bare filter see the same subject")
	var wrapped, bare struct {
		Subjects []demoSubject `json:"subjects"`
		Total    int           `json:"total"`
	}
	if err := d.Result(ctx, a, "task/list", map[string]any{"filter": map[string]any{"status": []string{"in-progress"}, "labels_all": []string{"backend", "p1"}}}, &wrapped); err != nil {
		return "", err
	}
	if err := d.Result(ctx, b, "task/list", map[string]any{"status": []string{"doing"}, "limit": 50}, &bare); err != nil {
		return "", err
	}
	if err := d.Expect(wrapped.Total == 1 && bare.Total == 1 && wrapped.Subjects[0].ID == bare.Subjects[0].ID, "both: 1 subject, %s", s.ID); err != nil {
		return "", err
	}

	d.Step("Errors: a missing id is not_found (-32602); a kind this plugin does not serve is -32601")
	for _, c := range []struct {
		method string
		code   int
	}{{"task/get", -32602}, {"epic/get", -32601}} {
		resp, err := d.Call(ctx, a, c.method, map[string]string{"id": "task:01ZZZZZZZZZZZZZZZZZZZZZZZZ"})
		if err != nil {
			return "", err
		}
		if err := d.Expect(resp.Error != nil && resp.Error.Code == c.code, "%s → %s", c.method, errText(resp)); err != nil {
			return "", err
		}
	}

	d.Step("B: delete; A's watch says deleted; task/next has nothing ready left")
	if err := d.Result(ctx, b, "task/delete", map[string]string{"id": s.ID}, nil); err != nil {
		return "", err
	}
	next, err := d.Call(ctx, a, "task/next", nil)
	if err != nil {
		return "", err
	}
	for deadline := time.Now().Add(5 * time.Second); len(watchKinds(a)) < 4 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	d.Frames(a)
	if err := d.Expect(len(watchKinds(a)) == 4 && string(next.Result) == "null", "events %v; next → null", watchKinds(a)); err != nil {
		return "", err
	}

	d.Step("The daemon's shutdown ladder, with A's watch still live")
	for _, h := range []*fakehost.Host{a, b} {
		rep, err := h.Shutdown(ctx, fakehost.LadderDaemon)
		if err != nil {
			return "", err
		}
		if err := d.Expect(rep.ExitedByItself && rep.ExitCode == 0, "exited by itself with code 0, %v after shutdown", rep.Elapsed.Round(time.Millisecond)); err != nil {
			return "", err
		}
	}
	return "2 processes, 1 database: create/update/status/delete by one, watched in order by the other; list shapes, errors, clean exit", nil
}

// watchKinds lists the change kinds of the subject/changed notifications
// for watch 500 so far.
func watchKinds(h *fakehost.Host) []string {
	var out []string
	for _, n := range h.Notifications() {
		var p struct {
			ID    json.RawMessage `json:"id"`
			Event struct {
				ChangeKind string `json:"change_kind"`
			} `json:"event"`
		}
		if n.Method == "subject/changed" && json.Unmarshal(n.Params, &p) == nil && string(p.ID) == "500" {
			out = append(out, p.Event.ChangeKind)
		}
	}
	return out
}

func subjectHas(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
