package durable

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// TestCompactJSON: stored values are compacted but otherwise kept as sent
// (key order, "<" unescaped); absent and null store nothing.
func TestCompactJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, ``},
		{` null `, ``},
		{`{ "b" : 1, "a" : [ 1, 2 ] }`, `{"b":1,"a":[1,2]}`},
		{`"<b>&\u003c"`, `"<b>&\u003c"`},
		{`1.50e3`, `1.50e3`},
	}
	for _, tc := range tests {
		if got := compactJSON(json.RawMessage(tc.in)); string(got) != tc.want {
			t.Errorf("compactJSON(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestNormalizeStepError(t *testing.T) {
	tests := []struct {
		in, want, field string
	}{
		{``, ``, ""},
		{`null`, ``, ""},
		{`{"message":"m","code":"C"}`, `{"code":"C","message":"m"}`, ""},
		{`{"message":"<b>&","code":"C","details":null,"extra":1}`, `{"code":"C","message":"<b>&"}`, ""},
		{`{"code":"C","message":"m","details":{ "b" : [1, 2] }}`, `{"code":"C","details":{"b":[1,2]},"message":"m"}`, ""},
		{`{"code":"C"}`, ``, "error.message"},
		{`{"message":"m"}`, ``, "error.code"},
		{`{"code":1,"message":"m"}`, ``, "error"},
		{`"boom"`, ``, "error"},
	}
	for _, tc := range tests {
		got, err := normalizeStepError(json.RawMessage(tc.in))
		if tc.field != "" {
			var e *pluginkit.Error
			if !errors.As(err, &e) || e.Code != pluginkit.CodeInvalidParams || e.Data["field"] != tc.field {
				t.Errorf("%s: %v, want -32602 on %s", tc.in, err, tc.field)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %s %v, want %s", tc.in, got, err, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	str := func(s string) *string { return &s }
	long := strings.Repeat("x", maxIDBytes+1)
	tests := []struct {
		name  string
		p     interface{ Validate() error }
		code  int // 0 = valid
		field string
	}{
		{"begin_workflow_run ok", BeginWorkflowRunParams{RunID: "r", PhaseID: "p"}, 0, ""},
		{"begin_workflow_run no run", BeginWorkflowRunParams{PhaseID: "p"}, -32602, "run_id"},
		{"begin_workflow_run long phase", BeginWorkflowRunParams{RunID: "r", PhaseID: long}, -32602, "phase_id"},
		{"begin_step ok", BeginStepParams{RunID: "r", PhaseID: "p", StepName: "s", IdempotencyKey: "k"}, 0, ""},
		{"begin_step no key", BeginStepParams{RunID: "r", PhaseID: "p", StepName: "s"}, -32602, "idempotency_key"},
		{"begin_step no name", BeginStepParams{RunID: "r", PhaseID: "p", IdempotencyKey: "k"}, -32602, "step_name"},
		{"commit ok", CommitStepParams{StepID: "s", Outcome: str("error")}, 0, ""},
		{"commit missing outcome", CommitStepParams{StepID: "s"}, -32602, "outcome"},
		{"commit bad outcome first", CommitStepParams{Outcome: str("SUCCESS")}, CodeInvalidCommitOutcome, "outcome"},
		{"commit empty outcome", CommitStepParams{StepID: "s", Outcome: str("")}, CodeInvalidCommitOutcome, "outcome"},
		{"commit no step", CommitStepParams{Outcome: str("success")}, -32602, "step_id"},
		{"commit bad error", CommitStepParams{StepID: "s", Outcome: str("error"), Error: json.RawMessage(`{"code":"c"}`)}, -32602, "error.message"},
		{"abandon ok", AbandonStepParams{StepID: "s"}, 0, ""},
		{"abandon no step", AbandonStepParams{}, -32602, "step_id"},
		{"recover ok", RecoverInFlightParams{SinceEpoch: new(uint64)}, 0, ""},
		{"recover no cursor", RecoverInFlightParams{}, -32602, "since_epoch"},
		{"query ok", QueryRunParams{RunID: "r", PhaseID: "p"}, 0, ""},
		{"query no phase", QueryRunParams{RunID: "r"}, -32602, "phase_id"},
	}
	for _, tc := range tests {
		err := tc.p.Validate()
		if tc.code == 0 {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var e *pluginkit.Error
		if !errors.As(err, &e) || e.Code != tc.code || e.Data["field"] != tc.field {
			t.Errorf("%s: %v, want code %d on %s", tc.name, err, tc.code, tc.field)
		}
	}
}

func TestLoadRules(t *testing.T) {
	tests := []struct {
		name    string
		getenv  func(string) string
		want    Rules
		wantErr string
	}{
		{"defaults", env(), Rules{ReservationTTL: 300 * time.Second, MaxPayloadBytes: 1 << 20}, ""},
		{"all set", env(EnvReservationTTL, "60", EnvMaxPayloadBytes, "4096"), Rules{ReservationTTL: time.Minute, MaxPayloadBytes: 4096}, ""},
		{"ttl zero", env(EnvReservationTTL, "0"), Rules{}, EnvReservationTTL},
		{"ttl too long", env(EnvReservationTTL, "86401"), Rules{}, EnvReservationTTL},
		{"ttl not a number", env(EnvReservationTTL, "soon"), Rules{}, EnvReservationTTL},
		{"payload not a number", env(EnvMaxPayloadBytes, "1MB"), Rules{}, EnvMaxPayloadBytes},
		{"payload above ceiling", env(EnvMaxPayloadBytes, "8388608"), Rules{}, EnvMaxPayloadBytes},
	}
	for _, tc := range tests {
		got, err := LoadRules(tc.getenv)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %v, want an error naming %s", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v %v, want %+v", tc.name, got, err, tc.want)
		}
	}
}
