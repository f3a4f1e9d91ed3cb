package queue

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/wire"
	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
)

// Helpers of the queue/v2/* tests. Responses are decoded strictly (no key
// the wire types do not declare), as the 0.7 daemon decodes them.

// strictDecode decodes raw into v, refusing unknown keys.
func strictDecode(t *testing.T, raw []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("response %s does not decode strictly: %v", raw, err)
	}
}

// v2Dispatch is a dispatch for a Task subject with extra dispatch fields
// (",\"vars\":{…}" or "").
func v2Dispatch(task, extra string) string {
	return `{"requested_at":"2026-06-14T11:00:00Z","subject":{"Task":{"id":"` + task +
		`"}},"trigger_source":"test","workflow_ref":"standard"` + extra + `}`
}

// addParams is queue/v2/enqueue params for task with extra envelope fields.
func addParams(task, extra string) string {
	return `{"subject_dispatch":` + v2Dispatch(task, "") + extra + `}`
}

// add calls queue/v2/enqueue.
func (f *fixture) add(params string) wire.EnqueueV2Response {
	f.t.Helper()
	var r wire.EnqueueV2Response
	strictDecode(f.t, f.h.OK(f.t, "queue/v2/enqueue", params, nil), &r)
	return r
}

// addTask adds task with no key and returns its entry id.
func (f *fixture) addTask(task, extra string) string {
	f.t.Helper()
	return f.add(addParams(task, extra)).EntryID
}

// leaseV2 calls queue/v2/lease with max fresh workflow ids (wf-1, wf-2, …
// across the test) and the exclude fences.
func (f *fixture) leaseV2(max int, owner string, exclude ...wire.ExecutionFence) wire.LeaseV2Response {
	f.t.Helper()
	var r wire.LeaseV2Response
	strictDecode(f.t, f.h.OK(f.t, "queue/v2/lease", f.leaseParams(max, owner, exclude...), nil), &r)
	return r
}

func (f *fixture) leaseParams(max int, owner string, exclude ...wire.ExecutionFence) string {
	ids := make([]string, max)
	for i := range ids {
		f.wfs++
		ids[i] = fmt.Sprintf("wf-%d", f.wfs)
	}
	p := map[string]any{"max": max, "owner_id": owner, "workflow_ids": ids}
	if len(exclude) > 0 {
		p["exclude"] = exclude
	}
	return mustJSON(p)
}

// leaseOne leases exactly one entry and returns its fence.
func (f *fixture) leaseOne(owner string) wire.ExecutionFence {
	f.t.Helper()
	r := f.leaseV2(1, owner)
	if len(r.Leased) != 1 {
		f.t.Fatalf("lease: %+v, want one entry", r)
	}
	return r.Leased[0].Execution
}

// mutate calls a ticket method with the fence and extra params fields.
func (f *fixture) mutate(method string, fence wire.ExecutionFence, extra string) wire.MutationV2Response {
	f.t.Helper()
	var r wire.MutationV2Response
	strictDecode(f.t, f.h.OK(f.t, method, `{"execution":`+mustJSON(fence)+extra+`}`, nil), &r)
	return r
}

// Short names of the ticket calls.
func (f *fixture) renewT(fence wire.ExecutionFence, extra string) wire.MutationV2Response {
	f.t.Helper()
	return f.mutate("queue/v2/lease/renew", fence, extra)
}

func (f *fixture) recoverT(fence wire.ExecutionFence, owner string) wire.MutationV2Response {
	f.t.Helper()
	return f.mutate("queue/v2/lease/recover", fence, `,"new_owner_id":`+mustJSON(owner))
}

func (f *fixture) completeT(fence wire.ExecutionFence, status string) wire.MutationV2Response {
	f.t.Helper()
	return f.mutate("queue/v2/completion", fence, `,"status":"`+status+`"`)
}

func (f *fixture) putBackT(fence wire.ExecutionFence) wire.MutationV2Response {
	f.t.Helper()
	return f.mutate("queue/v2/release_pending", fence, `,"reason":" spawn-deferred "`)
}

// outcome renders a mutation result as "outcome[: reason]".
func outcome(r wire.MutationV2Response) string {
	if r.Reason != "" {
		return r.Outcome + ": " + r.Reason
	}
	return r.Outcome
}

// listed returns queue/list as "subject_id:status" in queue order.
func (f *fixture) listed() string {
	f.t.Helper()
	var r struct {
		Entries []wire.Entry `json:"entries"`
	}
	f.h.OK(f.t, "queue/list", "", &r)
	var parts []string
	for _, e := range r.Entries {
		parts = append(parts, e.SubjectID+":"+e.Status)
	}
	return strings.Join(parts, " ")
}

// rawExec changes the database behind the service's back (damaged data,
// old schemas). On PostgreSQL the statement runs in the project's
// namespace, with SQLite's ? placeholders turned into $1, $2, ….
func (f *fixture) rawExec(query string, args ...any) {
	f.t.Helper()
	if testBackend() == "postgres" {
		dsn := pgtest.DSN(f.t)
		c := pgtest.Connect(f.t, dsn)
		ctx := context.Background()
		if _, err := c.Exec(ctx, "SET search_path TO "+pgtest.SchemaFor(f.t, dsn, f.dir)); err != nil {
			f.t.Fatal(err)
		}
		for n := 1; strings.Contains(query, "?"); n++ {
			query = strings.Replace(query, "?", fmt.Sprintf("$%d", n), 1)
		}
		if _, err := c.Exec(ctx, query, args...); err != nil {
			f.t.Fatal(err)
		}
		return
	}
	db, err := sqlitex.Open(context.Background(), sqlitex.Options{Path: f.dbPath()})
	if err != nil {
		f.t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(query, args...); err != nil {
		f.t.Fatal(err)
	}
}
