package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"
)

// The queue suite's machinery: a scenario is a list of steps, each one
// daemon queue call in its own process against the scenario's project, with
// the checks its result must pass.

const (
	changed   = `{"changed":true,"not_found":false}`
	unchanged = `{"changed":false,"not_found":false}`
	notFound  = `{"changed":false,"not_found":true}`
)

// qstep is one call in its own process. params and want may name entry ids
// saved by earlier steps as $name.
type qstep struct {
	method string
	params string // "" sends no params key
	want   string // the result must equal this JSON
	code   int    // or: the call must fail with this code
	// check inspects the result (or, with code, error.data); names maps
	// saved names to entry ids.
	check func(raw json.RawMessage, names map[string]string) error
	save  string // remember result.entry_id as $save
}

// queueDispatch is an enqueue's params for subject: a legacy task id, or a
// SubjectRef object when it starts with "{".
func queueDispatch(subject, extra string) string {
	if !strings.HasPrefix(subject, "{") {
		subject = `{"Task":{"id":"` + subject + `"}}`
	}
	return `{"subject_dispatch":{"requested_at":"2026-06-14T12:00:00.123456Z","subject":` + subject +
		`,"trigger_source":"manual-queue-enqueue","workflow_ref":"standard"}` + extra + `}`
}

func enq(name, subject, extra string) qstep {
	return qstep{method: "queue/enqueue", params: queueDispatch(subject, extra), save: name,
		check: func(raw json.RawMessage, _ map[string]string) error {
			var r struct {
				Enqueued bool   `json:"enqueued"`
				EntryID  string `json:"entry_id"`
			}
			if err := json.Unmarshal(raw, &r); err != nil || !r.Enqueued || r.EntryID == "" {
				return fmt.Errorf("enqueue result %s: want enqueued:true and an entry_id", raw)
			}
			return nil
		}}
}

// enqWarn enqueues TASK-style subjects and checks the duplicate warning
// ("" = none) and that the entry id is new.
func enqWarn(name, subject, warning string) qstep {
	st := enq(name, subject, "")
	st.check = func(raw json.RawMessage, names map[string]string) error {
		var r struct {
			Enqueued  bool    `json:"enqueued"`
			EntryID   string  `json:"entry_id"`
			SubjectID string  `json:"subject_id"`
			Warning   *string `json:"warning"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return err
		}
		got := ""
		if r.Warning != nil {
			got = *r.Warning
		}
		if !r.Enqueued || r.SubjectID != subject || got != warning {
			return fmt.Errorf("enqueue result %s: want enqueued:true, subject_id %q, warning %q", raw, subject, warning)
		}
		for n, id := range names {
			if id == r.EntryID {
				return fmt.Errorf("entry id %s reused (it is $%s)", id, n)
			}
		}
		return nil
	}
	return st
}

func ok(method, params, want string) qstep { return qstep{method: method, params: params, want: want} }

func fails(method, params string, code int, check func(json.RawMessage, map[string]string) error) qstep {
	return qstep{method: method, params: params, code: code, check: check}
}

// dataIs checks that error.data holds these keys with these values.
func dataIs(want string) func(json.RawMessage, map[string]string) error {
	return func(raw json.RawMessage, _ map[string]string) error {
		var got, w map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			return fmt.Errorf("error.data %s: %v", raw, err)
		}
		_ = json.Unmarshal([]byte(want), &w)
		for k, v := range w {
			if !reflect.DeepEqual(got[k], v) {
				return fmt.Errorf("error.data %s, want %s", raw, want)
			}
		}
		return nil
	}
}

func rawContains(sub string) func(json.RawMessage, map[string]string) error {
	return func(raw json.RawMessage, _ map[string]string) error {
		if !bytes.Contains(raw, []byte(sub)) {
			return fmt.Errorf("result lacks %s: %s", sub, clip(raw))
		}
		return nil
	}
}

func rawLacks(subs ...string) func(json.RawMessage, map[string]string) error {
	return func(raw json.RawMessage, _ map[string]string) error {
		for _, sub := range subs {
			if bytes.Contains(raw, []byte(sub)) {
				return fmt.Errorf("result has %s: %s", sub, clip(raw))
			}
		}
		return nil
	}
}

// queueEntry is what the scenarios read of a QueueEntry.
type queueEntry struct {
	EntryID         string          `json:"entry_id"`
	SubjectID       string          `json:"subject_id"`
	TaskID          *string         `json:"task_id"`
	Status          string          `json:"status"`
	WorkflowID      *string         `json:"workflow_id"`
	EnqueuedAt      string          `json:"enqueued_at"`
	AssignedAt      *string         `json:"assigned_at"`
	SubjectDispatch json.RawMessage `json:"subject_dispatch"`
}

type queueList struct {
	Entries []queueEntry    `json:"entries"`
	Stats   json.RawMessage `json:"stats"`
	Total   *int            `json:"total"`
}

// nameOf maps an entry id back to its saved name.
func nameOf(names map[string]string, id string) string {
	for n, v := range names {
		if v == id {
			return n
		}
	}
	return id
}

// listIs lists every entry and compares "name:status" in queue order.
func listIs(want string) qstep {
	return qstep{method: "queue/list", params: `{}`, check: func(raw json.RawMessage, names map[string]string) error {
		var l queueList
		if err := json.Unmarshal(raw, &l); err != nil {
			return err
		}
		var got []string
		for _, e := range l.Entries {
			got = append(got, nameOf(names, e.EntryID)+":"+e.Status)
		}
		if strings.Join(got, " ") != want {
			return fmt.Errorf("queue is %q, want %q", strings.Join(got, " "), want)
		}
		return nil
	}}
}

// listNames checks the names of the listed entries, in order.
func listNames(want string) func(json.RawMessage, map[string]string) error {
	return func(raw json.RawMessage, names map[string]string) error {
		var l queueList
		if err := json.Unmarshal(raw, &l); err != nil {
			return err
		}
		var got []string
		for _, e := range l.Entries {
			got = append(got, nameOf(names, e.EntryID))
		}
		if strings.Join(got, " ") != want {
			return fmt.Errorf("listed %q, want %q", strings.Join(got, " "), want)
		}
		return nil
	}
}

// listPage checks one filtered/paginated list: the names, the filtered
// total, and stats always present.
func listPage(params, want string, total int) qstep {
	names := listNames(want)
	return qstep{method: "queue/list", params: params, check: func(raw json.RawMessage, n map[string]string) error {
		if err := names(raw, n); err != nil {
			return fmt.Errorf("list %s: %v", params, err)
		}
		var l queueList
		_ = json.Unmarshal(raw, &l)
		if l.Total == nil || *l.Total != total || len(l.Stats) == 0 {
			return fmt.Errorf("list %s: total %v, stats %s; want total %d and stats", params, l.Total, l.Stats, total)
		}
		return nil
	}}
}

// leaseIs leases and compares "name/workflow_id" in order ("*" = any
// non-empty workflow id). Every leased entry must be assigned with
// assigned_at.
func leaseIs(params, want string) qstep {
	return qstep{method: "queue/lease", params: params, check: func(raw json.RawMessage, names map[string]string) error {
		var r struct {
			Leased []queueEntry `json:"leased"`
		}
		if err := json.Unmarshal(raw, &r); err != nil || r.Leased == nil {
			return fmt.Errorf("lease result %s: want {\"leased\":[…]}", clip(raw))
		}
		var got []string
		wants := strings.Fields(want)
		for i, e := range r.Leased {
			wf := ""
			if e.WorkflowID != nil {
				wf = *e.WorkflowID
			}
			if e.Status != "assigned" || e.AssignedAt == nil || wf == "" {
				return fmt.Errorf("leased entry %s: status %q, assigned_at %v, workflow_id %q", e.EntryID, e.Status, e.AssignedAt, wf)
			}
			if i < len(wants) && strings.HasSuffix(wants[i], "/*") {
				wf = "*"
			}
			got = append(got, nameOf(names, e.EntryID)+"/"+wf)
		}
		if strings.Join(got, " ") != want {
			return fmt.Errorf("lease %s leased %q, want %q", params, strings.Join(got, " "), want)
		}
		return nil
	}}
}

var chronoTimestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3}|\.\d{6}|\.\d{9})?\+00:00$`)

// checkListBasics checks the two entries of enqueue-list-stats: queue
// order, subject keys, task_id only for tasks, chrono timestamps, stats.
func checkListBasics(raw json.RawMessage, names map[string]string) error {
	var l queueList
	if err := json.Unmarshal(raw, &l); err != nil {
		return err
	}
	if len(l.Entries) != 2 || l.Total == nil || *l.Total != 2 {
		return fmt.Errorf("list %s: want 2 entries, total 2", clip(raw))
	}
	a, b := l.Entries[0], l.Entries[1]
	switch {
	case a.EntryID != names["a"] || b.EntryID != names["b"]:
		return fmt.Errorf("entries out of order")
	case a.SubjectID != "TASK-1" || a.TaskID == nil || *a.TaskID != "TASK-1":
		return fmt.Errorf("task entry: subject_id %q task_id %v", a.SubjectID, a.TaskID)
	case b.SubjectID != "linear.issue::ENG-7" || b.TaskID != nil:
		return fmt.Errorf("generic entry: subject_id %q task_id %v", b.SubjectID, b.TaskID)
	case a.Status != "pending" || a.WorkflowID != nil || a.AssignedAt != nil:
		return fmt.Errorf("fresh entry: status %q workflow_id %v assigned_at %v", a.Status, a.WorkflowID, a.AssignedAt)
	case !chronoTimestamp.MatchString(a.EnqueuedAt):
		return fmt.Errorf("enqueued_at %q is not chrono's to_rfc3339 (+00:00)", a.EnqueuedAt)
	}
	return jsonEqual(l.Stats, `{"assigned":0,"deferred":0,"held":0,"pending":2,"total":2}`)
}

// checkDeadline: next_run_at is the deferred entry's run_at instant,
// rendered with +00:00.
func checkDeadline(runAt string) func(json.RawMessage, map[string]string) error {
	return func(raw json.RawMessage, _ map[string]string) error {
		var r struct {
			NextRunAt string `json:"next_run_at"`
		}
		_ = json.Unmarshal(raw, &r)
		got, err := time.Parse(time.RFC3339Nano, r.NextRunAt)
		want, _ := time.Parse(time.RFC3339, runAt)
		if err != nil || !got.Equal(want) || !chronoTimestamp.MatchString(r.NextRunAt) {
			return fmt.Errorf("next_deadline %s, want the instant %s as +00:00", raw, runAt)
		}
		return nil
	}
}

func jsonEqual(got json.RawMessage, want string) error {
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		return fmt.Errorf("result %s: %v", clip(got), err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		return fmt.Errorf("bad expectation %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		return fmt.Errorf("result %s, want %s", clip(got), want)
	}
	return nil
}

// queueSteps runs steps one process each in a fresh project.
func queueSteps(steps ...qstep) func(context.Context, *Session) Outcome {
	return func(ctx context.Context, s *Session) Outcome {
		p, err := newQueueProject(s)
		if err != nil {
			return failf("%v", err)
		}
		names := map[string]string{}
		for i, st := range steps {
			if err := runStep(ctx, p, st, names); err != nil {
				return failf("step %d (%s): %v", i+1, st.method, err)
			}
		}
		return pass()
	}
}

func runStep(ctx context.Context, p *queueProject, st qstep, names map[string]string) error {
	expand := func(s string) string {
		keys := make([]string, 0, len(names))
		for k := range names {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
		for _, k := range keys {
			s = strings.ReplaceAll(s, "$"+k, names[k])
		}
		return s
	}
	resp, err := p.call(ctx, st.method, expand(st.params))
	if err != nil {
		return err
	}
	if st.code != 0 {
		if err := wantError(resp, st.code, ""); err != nil {
			return err
		}
		if st.check != nil {
			return st.check(resp.Error.Data, names)
		}
		return nil
	}
	if err := wantResult(resp, nil); err != nil {
		return err
	}
	if st.want != "" {
		if err := jsonEqual(resp.Result, expand(st.want)); err != nil {
			return err
		}
	}
	if st.check != nil {
		if err := st.check(resp.Result, names); err != nil {
			return err
		}
	}
	if st.save != "" {
		var r struct {
			EntryID string `json:"entry_id"`
		}
		_ = json.Unmarshal(resp.Result, &r)
		names[st.save] = r.EntryID
	}
	return nil
}
