package subjectpostgres

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
)

// importDB runs `animus-subject-postgres import --from-sqlite file` with
// env alone and returns its exit code and output.
func importDB(t *testing.T, env map[string]string, file string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binaries.Path(t, binaryName), "import", "--from-sqlite", file)
	cmd.Env = []string{}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// listQueries are the task/list calls whose answers must match across the
// two binaries: everything, filters over labels, status and assignee (bare
// and in the daemon's wrapped form), and a first page (its cursor too).
func listQueries() []map[string]any {
	return []map[string]any{
		nil,
		{"labels_all": []string{"backend"}},
		{"status": []string{"blocked"}},
		{"filter": map[string]any{"labels_any": []string{"frontend", "p1"}}},
		{"assignee": []string{"agent:default"}},
		{"limit": 2},
	}
}

// withoutFetchedAt is a SubjectList's fields but fetched_at (the moment
// of the read, the only field two reads of one state may differ in).
func withoutFetchedAt(t *testing.T, raw json.RawMessage) map[string]string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("list: %v: %s", err, raw)
	}
	out := map[string]string{}
	for k, v := range m {
		if k != "fetched_at" {
			out[k] = string(v)
		}
	}
	return out
}

func lists(t *testing.T, h *fakehost.Host) []map[string]string {
	t.Helper()
	var out []map[string]string
	for _, q := range listQueries() {
		out = append(out, withoutFetchedAt(t, e2etest.Call(t, h, "task/list", q)))
	}
	return out
}

// A team moving its task list from one machine to several: a database
// animus-subject-sqlite wrote (labels, a parent and its child, a comment,
// statuses, priorities, a custom field) is imported into an empty
// namespace; animus-subject-postgres then lists exactly what
// animus-subject-sqlite listed — same ids, same JSON but fetched_at —
// with and without filters, keeps the comment, and takes new subjects.
// A second import into the now non-empty namespace exits 1, says why, and
// changes nothing.
func TestImportFromSQLite(t *testing.T) {
	dir := e2etest.Project(t)
	old := e2etest.Spawn(t, sqliteName, e2etest.Options{Dir: dir, Schemas: schemas(t)})
	parent := call[subject](t, old, "task/create", map[string]any{"title": "epic", "description": "the parent",
		"labels": []string{"backend", "p1"}, "priority": "critical", "custom": map[string]any{"points": 8, "team": "core"}})
	child := call[subject](t, old, "task/create", map[string]any{"title": "child", "parent": parent.ID, "labels": []string{"backend"}, "priority": 1})
	blocked := call[subject](t, old, "task/create", map[string]any{"title": "stuck", "assignee": "agent:default"})
	call[subject](t, old, "task/status", map[string]any{"id": blocked.ID, "status": "blocked"})
	call[subject](t, old, "task/create", map[string]any{"title": "finished", "status": "done", "labels": []string{"frontend"}})
	call[subject](t, old, "task/update", map[string]any{"id": child.ID, "patch": map[string]any{"comment": "ran once", "status": "in-progress"}})
	const subjects, comments = 4, 1
	wantLists := lists(t, old)
	// The filters select something, and not everything: a filter the
	// plugins ignored would compare equal and prove nothing.
	for i, n := range []int{subjects, 2, 1, 2, 1, 2} {
		if got := len(e2etest.Decode[[]json.RawMessage](t, json.RawMessage(wantLists[i]["subjects"]))); got != n {
			t.Fatalf("set-up: task/list %v gives %d subjects, want %d", listQueries()[i], got, n)
		}
	}
	wantComments := e2etest.Call(t, old, "task/comments", map[string]string{"id": child.ID})
	if got := call[struct{ Subjects []subject }](t, old, "task/list", nil); len(got.Subjects) != subjects {
		t.Fatalf("set-up: %d subjects, want %d", len(got.Subjects), subjects)
	}
	e2etest.Shutdown(t, old, fakehost.LadderDaemon)

	s := pgns.Subject.New(t)
	file := filepath.Join(dir, ".animus", "subjects", "sqlite.db")
	if code, out := importDB(t, s.Map(nil), file); code != 0 || !strings.Contains(out, fmt.Sprintf("%d subjects, %d comments", subjects, comments)) {
		t.Fatalf("import: exit %d: %s", code, out)
	}

	next := newHost(t, "host-b", s, nil).start()
	for i, got := range lists(t, next) {
		if !mapsEqual(got, wantLists[i]) {
			t.Errorf("task/list %v after the import\n got %v\nwant %v", listQueries()[i], got, wantLists[i])
		}
	}
	if got := e2etest.Call(t, next, "task/comments", map[string]string{"id": child.ID}); !bytes.Equal(got, wantComments) {
		t.Errorf("task/comments after the import\n got %s\nwant %s", got, wantComments)
	}
	fresh := call[subject](t, next, "task/create", map[string]any{"title": "after the move", "parent": parent.ID})
	all := call[struct{ Subjects []subject }](t, next, "task/list", nil)
	var ids []string
	for _, x := range all.Subjects {
		ids = append(ids, x.ID)
	}
	if len(ids) != subjects+1 || !slices.Contains(ids, fresh.ID) || fresh.ID == parent.ID || fresh.ID == child.ID {
		t.Errorf("after a create on the imported namespace: %v (new %s)", ids, fresh.ID)
	}
	if p := call[subject](t, next, "task/get", map[string]string{"id": parent.ID}); !slices.Equal(p.Children, []string{child.ID, fresh.ID}) {
		t.Errorf("the imported parent's children: %v, want %v", p.Children, []string{child.ID, fresh.ID})
	}

	before, seq := lists(t, next), lastSeq(t, s)
	if code, out := importDB(t, s.Map(nil), file); code != 1 || !strings.Contains(out, "not empty") {
		t.Errorf("second import: exit %d: %s; want exit 1 refusing a namespace that is not empty", code, out)
	}
	for i, after := range lists(t, next) {
		if !mapsEqual(after, before[i]) {
			t.Errorf("a refused import changed task/list %v\nbefore %v\n after %v", listQueries()[i], before[i], after)
		}
	}
	if after := lastSeq(t, s); after != seq {
		t.Errorf("a refused import wrote to the change log: seq %d → %d", seq, after)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
