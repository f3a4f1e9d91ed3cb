package durable

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// TestBinding: without a usable project binding nothing touches the disk and
// every durable method answers -32305; a binding whose database cannot be
// created answers -32304 and reports unhealthy.
func TestBinding(t *testing.T) {
	root := t.TempDir()
	notDir := filepath.Join(root, "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	blocked := t.TempDir()
	if err := os.WriteFile(filepath.Join(blocked, ".animus"), []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		ext    any // init_extensions; nil sends none
		code   int
		health string
	}{
		{"no init_extensions", nil, CodeProjectBindingMismatch, "healthy"},
		{"other extensions only", map[string]any{"memory_mcp_stdio_command": map[string]string{"command": "/bin/animus"}}, CodeProjectBindingMismatch, "healthy"},
		{"binding without root", map[string]any{"project_binding": map[string]string{"repo_scope": "x"}}, CodeProjectBindingMismatch, "degraded"},
		{"relative root", binding("relative/dir"), CodeProjectBindingMismatch, "degraded"},
		{"root is a file", binding(notDir), CodeProjectBindingMismatch, "degraded"},
		{"root does not exist", binding(filepath.Join(root, "gone")), CodeProjectBindingMismatch, "degraded"},
		{".animus is a file", binding(blocked), CodeBackendUnavailable, "unhealthy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.code == CodeBackendUnavailable {
				sqliteOnly(t, "the step log is a file under the project root only on SQLite; a PostgreSQL namespace opens whatever .animus is")
			}
			c := serve(t, newService(t, env()), tc.ext)
			for _, m := range []struct {
				method string
				params any
			}{
				{"durable/begin_workflow_run", BeginWorkflowRunParams{RunID: "r", PhaseID: "p"}},
				{"durable/begin_step", BeginStepParams{RunID: "r", PhaseID: "p", StepName: "s", IdempotencyKey: "k"}},
				{"durable/commit_step", `{"step_id":"s","outcome":"success"}`},
				{"durable/abandon_step", `{"step_id":"s"}`},
				{"durable/recover_in_flight", `{"since_epoch":0}`},
				{"durable/query_run", QueryRunParams{RunID: "r", PhaseID: "p"}},
			} {
				e := c.Fails(t, m.method, m.params, tc.code, "")
				if strings.Contains(e.Message, root) || strings.Contains(e.Message, blocked) {
					t.Errorf("%s: message leaks a path: %s", m.method, e.Message)
				}
			}
			var h struct {
				Status    string `json:"status"`
				LastError string `json:"last_error"`
			}
			c.OK(t, "health/check", `{}`, &h)
			if h.Status != tc.health || (tc.health != "healthy") == (h.LastError == "") {
				t.Fatalf("health %+v, want %s with last_error iff not healthy", h, tc.health)
			}
			if tc.code == CodeProjectBindingMismatch {
				if entries, _ := os.ReadDir(root); len(entries) != 1 { // only "file"
					t.Fatalf("an unbound plugin created files: %v", entries)
				}
			}
		})
	}
}

// TestWireShapes checks each result's exact JSON: sorted keys, optional
// fields omitted, lists never null, timestamps in the Rust rendering.
func TestWireShapes(t *testing.T) {
	svc := newService(t, env())
	at := time.Date(2030, 1, 2, 3, 4, 5, 120_000_000, time.UTC)
	svc.now = func() time.Time { return at }
	c := serve(t, svc, binding(t.TempDir()))

	if got := string(c.OK(t, "durable/recover_in_flight", `{"since_epoch":0}`, nil)); got != `{"in_flight":[]}` {
		t.Errorf("empty recover: %s", got)
	}
	if got := string(c.OK(t, "durable/begin_workflow_run", `{"run_id":"r","phase_id":"p","inputs":null}`, nil)); got != `{"epoch":1}` {
		t.Errorf("begin_workflow_run: %s", got)
	}
	if got := string(c.OK(t, "durable/query_run", `{"run_id":"r","phase_id":"p"}`, nil)); got != `{"phase_id":"p","run_id":"r","status":"pending","steps":[]}` {
		t.Errorf("empty query_run: %s", got)
	}
	begin := `{"run_id":"r","phase_id":"p","step_name":"0","idempotency_key":"scope:wf:p:0","payload":null}`
	var first BeginStepResult
	raw := string(c.OK(t, "durable/begin_step", begin, &first))
	if raw != `{"status":"new","step_id":"`+first.StepID+`"}` || !strings.HasPrefix(first.StepID, "step_") {
		t.Errorf("new: %s", raw)
	}
	if got := string(c.OK(t, "durable/begin_step", begin, nil)); got != `{"reservation_expires_at":"2030-01-02T03:09:05.120+00:00","status":"in_progress","step_id":"`+first.StepID+`"}` {
		t.Errorf("in_progress: %s", got)
	}
	if got := string(c.OK(t, "durable/recover_in_flight", `{"since_epoch":0}`, nil)); got != `{"in_flight":[{"phase_id":"p","replay_state":{"epoch":1,"outstanding":[{"expired":false,"idempotency_key":"scope:wf:p:0","reservation_expires_at":"2030-01-02T03:09:05.120+00:00","reserved_at":"2030-01-02T03:04:05.120+00:00","step_id":"`+first.StepID+`","step_name":"0"}]},"run_id":"r"}]}` {
		t.Errorf("recover: %s", got)
	}
	commit := `{"step_id":"` + first.StepID + `","outcome":"success","output":{ "z": 1, "a": "<&>" }}`
	if got := string(c.OK(t, "durable/commit_step", commit, nil)); got != `{"ack":true}` {
		t.Errorf("commit: %s", got)
	}
	if got := string(c.OK(t, "durable/begin_step", begin, nil)); got != `{"prior_output":{"z":1,"a":"<&>"},"status":"already_committed","step_id":"`+first.StepID+`"}` {
		t.Errorf("already_committed: %s", got)
	}
	if got := string(c.OK(t, "durable/query_run", `{"run_id":"r","phase_id":"p"}`, nil)); got != `{"phase_id":"p","run_id":"r","status":"pending","steps":[{"committed_at":"2030-01-02T03:04:05.120+00:00","idempotency_key":"scope:wf:p:0","outcome":"success","output":{"z":1,"a":"<&>"},"step_id":"`+first.StepID+`","step_name":"0"}]}` {
		t.Errorf("query_run: %s", got)
	}
	var failed BeginStepResult
	c.OK(t, "durable/begin_step", `{"run_id":"r","phase_id":"p","step_name":"1","idempotency_key":"k1"}`, &failed)
	c.OK(t, "durable/commit_step", `{"step_id":"`+failed.StepID+`","outcome":"error","error":{"message":"boom","code":"STEP_FAILED","details":null}}`, nil)
	if got := string(c.OK(t, "durable/begin_step", `{"run_id":"r","phase_id":"p","step_name":"1","idempotency_key":"k1"}`, nil)); got != `{"prior_error":{"code":"STEP_FAILED","message":"boom"},"status":"prior_error","step_id":"`+failed.StepID+`"}` {
		t.Errorf("prior_error: %s", got)
	}
	if got := string(c.OK(t, "durable/abandon_step", `{"step_id":"`+failed.StepID+`","reason":"`+strings.Repeat("é", 1000)+`"}`, nil)); got != `{"ack":false}` {
		t.Errorf("abandon of a committed step: %s", got)
	}
}

// TestLimits: payloads over max_payload_bytes are -32602 and store nothing;
// reservation_ttl_secs 0 means the default and huge values are capped.
func TestLimits(t *testing.T) {
	svc := newService(t, env(EnvMaxPayloadBytes, "1024", EnvReservationTTL, "60"))
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	svc.now = func() time.Time { return at }
	c := serve(t, svc, binding(t.TempDir()))
	big := `"` + strings.Repeat("a", 1023) + `"` // 1025 bytes of JSON
	c.Fails(t, "durable/begin_workflow_run", `{"run_id":"r","phase_id":"p","inputs":`+big+`}`, -32602, "invalid_request")
	c.OK(t, "durable/begin_workflow_run", `{"run_id":"r","phase_id":"p","inputs":{"fits":true}}`, nil)
	c.Fails(t, "durable/begin_step", `{"run_id":"r","phase_id":"p","step_name":"s","idempotency_key":"k","payload":`+big+`}`, -32602, "")

	var r BeginStepResult
	c.OK(t, "durable/begin_step", `{"run_id":"r","phase_id":"p","step_name":"s","idempotency_key":"k"}`, &r)
	e := c.Fails(t, "durable/commit_step", `{"step_id":"`+r.StepID+`","outcome":"success","output":`+big+`}`, -32602, "invalid_request")
	if e.Field() != "output" || e.Data["max_payload_bytes"] != float64(1024) {
		t.Errorf("oversized output error data: %v", e.Data)
	}
	c.Fails(t, "durable/commit_step", `{"step_id":"`+r.StepID+`","outcome":"error","error":{"code":"c","message":`+big+`}}`, -32602, "")
	var q QueryRunResult
	c.OK(t, "durable/query_run", `{"run_id":"r","phase_id":"p"}`, &q)
	if len(q.Steps) != 0 {
		t.Fatalf("a refused commit was stored: %+v", q.Steps)
	}
	c.OK(t, "durable/commit_step", `{"step_id":"`+r.StepID+`","outcome":"success","output":"`+strings.Repeat("a", 1000)+`"}`, nil)

	for _, tc := range []struct {
		ttl  string
		want time.Duration
	}{
		{`0`, time.Minute}, {`null`, time.Minute}, {`30`, 30 * time.Second},
		{`999999999`, MaxReservationTTL}, {`18446744073709551615`, MaxReservationTTL},
	} {
		key := "ttl-" + tc.ttl
		var first, second BeginStepResult
		c.OK(t, "durable/begin_step", `{"run_id":"r","phase_id":"p","step_name":"`+key+`","idempotency_key":"`+key+`","reservation_ttl_secs":`+tc.ttl+`}`, &first)
		c.OK(t, "durable/begin_step", `{"run_id":"r","phase_id":"p","step_name":"`+key+`","idempotency_key":"`+key+`"}`, &second)
		if want := rustjson.Time(at.Add(tc.want)); second.ReservationExpiresAt != want {
			t.Errorf("ttl %s: expires %s, want %s", tc.ttl, second.ReservationExpiresAt, want)
		}
	}
	c.Fails(t, "durable/begin_step", `{"run_id":"r","phase_id":"p","step_name":"s","idempotency_key":"k","reservation_ttl_secs":-1}`, -32602, "")
	c.Fails(t, "durable/recover_in_flight", `{"since_epoch":"0"}`, -32602, "")
}

// TestCapabilities: kind_capabilities reflects the configuration.
func TestCapabilities(t *testing.T) {
	caps := newService(t, env(EnvMaxPayloadBytes, "2048", EnvReservationTTL, "90")).KindCapabilities()["durable_store"]
	b, err := json.Marshal(caps)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != `{"crate_version":"0.1.0","extra":{"default_reservation_ttl_secs":90,"max_payload_bytes":2048,"supports_recovery":true}}` {
		t.Fatalf("kind capability %s", got)
	}
}
