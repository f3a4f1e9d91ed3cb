package durable

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/steplog"
	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// TestWireErrors: each store failure gets the kind's code and a category,
// names the caller's run or step, and never leaks the database cause.
func TestWireErrors(t *testing.T) {
	cause := errors.New("disk I/O error at /srv/secret/project/.animus/durable.sqlite")
	tests := []struct {
		name     string
		err      error
		ref      string
		code     int
		category pluginkit.Category
		says     string
		data     map[string]any
	}{
		{"run", steplog.ErrRunNotFound, runRef("wf-1", "plan"), CodeRunNotFound, pluginkit.CategoryNotFound, `run "wf-1" phase "plan"`, nil},
		{"step", steplog.ErrStepNotFound, stepRef("step_1"), CodeStepNotFound, pluginkit.CategoryNotFound, `step "step_1"`, nil},
		{"superseded", steplog.ErrSuperseded, stepRef("step_1"), CodeReservationExpired, pluginkit.CategoryConflict, "must not commit", nil},
		{"nondeterminism", &steplog.NondeterminismError{Recorded: storage.Identity{RunID: "a", PhaseID: "b", StepName: "c"}}, "",
			CodeReplayNondeterminism, pluginkit.CategoryConflict, `step_name "c"`, nil},
		{"busy", &storage.BackendError{Op: "begin_step", Busy: true, Err: cause}, "", CodeBackendUnavailable, pluginkit.CategoryUnavailable,
			"busy", map[string]any{"retryable": true}},
		{"io", &storage.BackendError{Op: "commit_step", Err: cause}, "", CodeBackendUnavailable, pluginkit.CategoryUnavailable,
			"database error", map[string]any{"retryable": false}},
	}
	svc := newService(t, env())
	for _, tc := range tests {
		var e *pluginkit.Error
		if !errors.As(svc.wireError(context.Background(), tc.err, tc.ref), &e) {
			t.Fatalf("%s: not a pluginkit error", tc.name)
		}
		if e.Code != tc.code || e.Category != tc.category || !strings.Contains(e.Message, tc.says) {
			t.Errorf("%s: %d %s %q, want %d %s containing %q", tc.name, e.Code, e.Category, e.Message, tc.code, tc.category, tc.says)
		}
		if strings.Contains(e.Message, "/srv") || strings.Contains(e.Message, "I/O") {
			t.Errorf("%s: message leaks the cause: %s", tc.name, e.Message)
		}
		for k, v := range tc.data {
			if e.Data[k] != v {
				t.Errorf("%s: data[%s] = %v, want %v", tc.name, k, e.Data[k], v)
			}
		}
	}
	if err := svc.wireError(context.Background(), context.Canceled, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled call became %v", err)
	}
}
