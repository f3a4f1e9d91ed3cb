package queuesqlite

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
)

func inspect(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binaries.Path(t, binaryName), append([]string{"inspect"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errb.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

// TestInspect: the operator's view of a queue the plugin wrote, as tables
// and as JSON, with the audit trail.
func TestInspect(t *testing.T) {
	p := newProject(t)
	a := entryID(t, p.result("queue/enqueue", dispatch("TASK-1")))
	b := entryID(t, p.result("queue/enqueue", dispatch("TASK-2")))
	p.result("queue/lease", raw(`{"max":1,"workflow_ids":["wf-1"]}`))
	p.result("queue/release_pending", raw(`{"entry_id":"`+a+`","reason":"coding-scheduler-collision"}`))
	p.result("queue/hold", raw(`{"entry_id":"`+b+`","reason":"operator pause"}`))

	code, out, errOut := inspect(t, "--project", p.dir)
	if code != 0 {
		t.Fatalf("inspect: exit %d, %s", code, errOut)
	}
	for _, want := range []string{"total 2: pending 1 (deferred 0), assigned 0, held 1", a, b, "TASK-1", "held",
		"pending → assigned", "assigned → pending", "coding-scheduler-collision", "operator pause", "wf-1"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
		}
	}

	code, out, errOut = inspect(t, "--project", p.dir, "--json", "--entry", a)
	if code != 0 {
		t.Fatalf("inspect --json: exit %d, %s", code, errOut)
	}
	var rep struct {
		Stats   map[string]int `json:"stats"`
		Entries []struct {
			EntryID string `json:"entry_id"`
			Status  string `json:"status"`
		} `json:"entries"`
		Audit []struct {
			EntryID string  `json:"entry_id"`
			Method  string  `json:"method"`
			To      string  `json:"to_status"`
			Reason  *string `json:"reason"`
		} `json:"audit"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("inspect --json is not JSON: %v\n%s", err, out)
	}
	if rep.Stats["total"] != 2 || len(rep.Entries) != 2 || rep.Entries[0].EntryID != a || rep.Entries[1].Status != "held" {
		t.Errorf("report %+v", rep)
	}
	var methods []string
	for _, e := range rep.Audit {
		if e.EntryID != a {
			t.Errorf("--entry %s returned audit of %s", a, e.EntryID)
		}
		methods = append(methods, e.Method+">"+e.To)
	}
	if got := strings.Join(methods, " "); got != "queue/enqueue>pending queue/lease>assigned queue/release_pending>pending" {
		t.Errorf("audit of %s: %s", a, got)
	}

	if code, _, errOut := inspect(t, "--project", t.TempDir()); code != 1 || !strings.Contains(errOut, "no queue database") {
		t.Errorf("inspect of an empty project: exit %d, %s", code, errOut)
	}
	if code, _, _ := inspect(t); code != 2 {
		t.Errorf("inspect without --project: exit %d, want 2", code)
	}
}
