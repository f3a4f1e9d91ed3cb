package subjects

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
)

var verbs = []string{"list", "get", "create", "update", "status", "next", "delete", "schema", "watch", "unwatch", "comments"}

// Every verb is served under each configured kind and under subject/, and
// initialize advertises exactly that, then health/check and the markers.
func TestMethodTable(t *testing.T) {
	h := newHost(t, twoKinds)
	var want []string
	for _, prefix := range []string{"task/", "issue/", "subject/"} {
		for _, v := range verbs {
			want = append(want, prefix+v)
		}
	}
	want = append(want, "health/check", "subject_kind:task", "subject_kind:issue")
	var res struct {
		Capabilities struct {
			Methods      []string `json:"methods"`
			SubjectKinds []string `json:"subject_kinds"`
		} `json:"capabilities"`
	}
	got, err := h.Initialize(nil)
	if err != nil || json.Unmarshal(got, &res) != nil {
		t.Fatalf("initialize: %s %v", got, err)
	}
	if !slices.Equal(res.Capabilities.Methods, want) || !slices.Equal(res.Capabilities.SubjectKinds, []string{"task", "issue"}) {
		t.Errorf("methods %v kinds %v\nwant %v", res.Capabilities.Methods, res.Capabilities.SubjectKinds, want)
	}
	// A kind this plugin does not serve is -32601, so the daemon moves on.
	h.Fails(t, "epic/get", map[string]any{"id": "epic:1"}, -32601, pluginkit.CategoryMethodNotFound)
}

func TestSchema(t *testing.T) {
	for _, tc := range []struct {
		name                string
		env                 map[string]string
		kinds, natives      []string
		hints               string
		methods             []string
		params              any
		emptyOmitsOptionals bool
	}{
		{"with hints", twoKinds, []string{"task", "issue"}, []string{"In Review"},
			`[{"native_status":"In Review","maps_to":"in-progress","dispatch_label":"code-review"}]`,
			[]string{"task/schema", "issue/schema", "subject/schema"}, map[string]any{"ignored": true}, false},
		{"defaults", nil, []string{"task"}, nil, "null", []string{"task/schema", "subject/schema"}, json.RawMessage(`[1]`), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, tc.env)
			for _, m := range tc.methods {
				var s schemaResult
				res := h.OK(t, m, tc.params, &s)
				if !slices.Equal(s.Kinds, tc.kinds) || !slices.Equal(s.StatusValues, model.Statuses) ||
					!s.SupportsWatch || !s.SupportsCreate || !s.SupportsPagination || !s.SupportsDelete ||
					!slices.Equal(s.NativeStatusValues, tc.natives) || !equalJSON(s.StatusDispatchHints, json.RawMessage(tc.hints)) {
					t.Errorf("%s: %s", m, res)
				}
				if tc.emptyOmitsOptionals && (strings.Contains(string(res), "native_status_values") || strings.Contains(string(res), "status_dispatch_hints")) {
					t.Errorf("%s: empty optional fields on the wire: %s", m, res)
				}
			}
		})
	}
}

func TestHealth(t *testing.T) {
	ctx := context.Background()
	if r := New(Options{Rules: Rules{Kinds: []string{"task"}}}).Health(ctx); r.Status != pluginkit.Degraded || !strings.Contains(r.LastError, "not initialized") {
		t.Errorf("health before initialize: %+v", r)
	}
	if err := New(Options{}).Close(ctx); err != nil {
		t.Errorf("Close before initialize: %v", err)
	}
	h := start(t, nil)
	type health struct {
		Status    string `json:"status"`
		LastError string `json:"last_error"`
	}
	if got := ok[health](h, "health/check", nil); got.Status != "healthy" || got.LastError != "" {
		t.Errorf("health: %+v", got)
	}
	// A database that stopped answering is unhealthy.
	if err := h.app.store.Close(); err != nil {
		t.Fatal(err)
	}
	if got := ok[health](h, "health/check", nil); got.Status != "unhealthy" || !strings.HasPrefix(got.LastError, "database ping failed") {
		t.Errorf("health with the database closed: %+v", got)
	}
}
