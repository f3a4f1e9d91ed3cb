package conformance_test

import (
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/conformance"
)

// expect is one kind scenario's required verdict; reason must appear in the
// reason text so a FAIL or SKIP says why, not merely that it happened.
type expect struct {
	status conformance.Status
	reason string
}

// suiteCases drive each fixture in each mode. A kind scenario not listed in
// want must PASS. The good mode ("") runs the whole list Scenarios(kind)
// returns, generic suite included; the defect modes run only the kind suite,
// since they differ from the good mode only there.
var suiteCases = []struct {
	kind, mode string
	want       map[string]expect
}{
	{kind: "subject"},
	{kind: "subject", mode: "broken", want: map[string]expect{
		"subject-crud-round-trip": {conformance.Fail, "task/create returned no id"},
	}},
	{kind: "subject", mode: "needs-config", want: map[string]expect{
		"subject-list":      {conformance.Skip, "requires external configuration: task/list returned error: backend unavailable: FIXTURE_SUBJECT_DSN unset (code -32603)"},
		"list-result-shape": {conformance.Skip, "requires external configuration"},
		// The testkit classifies only the list error (subject.md §6 rows 4
		// and 5): a plugin that cannot create or watch without its
		// configuration fails these two under the official harness too.
		"subject-crud-round-trip": {conformance.Fail, "task/create: task/create returned error: backend unavailable: FIXTURE_SUBJECT_DSN unset (code -32603)"},
		"subject-watch-stream":    {conformance.Fail, "task/watch: task/watch returned error"},
		"watch-changed-shape":     {conformance.Skip, "no live watch to test"},
		"watch-ack-then-eof-exit": {conformance.Skip, "no live watch to test"},
	}},
	{kind: "trigger"},
	{kind: "trigger", mode: "broken", want: map[string]expect{
		// The nested {id, event} wrapper also fails the TriggerEvent schema
		// check every frame gets, so the watch fails too.
		"watch-fires-event":             {conformance.Fail, "missing property 'event_id'"},
		"ack-notification-not-answered": {conformance.Fail, "missing property 'event_id'"},
		"event-payload-shape":           {conformance.Fail, "event missing required field `event_id`"},
	}},
	{kind: "trigger", mode: "needs-config", want: map[string]expect{
		"watch-fires-event":   {conformance.Skip, "trigger/watch requires external configuration: backend unavailable: FIXTURE_TRIGGER_TOKEN unset (code -32603)"},
		"event-payload-shape": {conformance.Skip, "no event captured"},
	}},
	{kind: "transport"},
	{kind: "transport", mode: "broken", want: map[string]expect{
		"serve-and-accept":    {conformance.Fail, "connection refused"},
		"bound-addr-accurate": {conformance.Fail, `bound_addr "127.0.0.1:0" does not name the port`},
		"address-in-use":      {conformance.Fail, "which is in use: got result"},
	}},
	{kind: "log-storage"},
	{kind: "log-storage", mode: "broken", want: map[string]expect{
		"schema-health": {conformance.Fail, "schema supports_tail=false but capabilities advertise tail=true"},
	}},
}

func TestKindSuites(t *testing.T) {
	set := schemas(t)
	for _, tc := range suiteCases {
		name := tc.kind + "/" + tc.mode
		if tc.mode == "" {
			name = tc.kind + "/good"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			kindNames := map[string]bool{}
			for _, sc := range conformance.Scenarios(tc.kind) {
				if sc.Suite == tc.kind {
					kindNames[sc.Name] = true
				}
			}
			if len(kindNames) == 0 {
				t.Fatalf("no %s suite registered", tc.kind)
			}
			for n := range tc.want {
				if !kindNames[n] {
					t.Fatalf("expectation for unknown scenario %s/%s", tc.kind, n)
				}
			}

			ctx := testCtx(t, 2*time.Minute)
			target, err := conformance.Prepare(ctx, bin(tc.kind), tc.kind, set, map[string]string{"FIXTURE_MODE": tc.mode})
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			opts := conformance.Options{}
			if tc.mode != "" {
				opts.Filter = tc.kind + "/"
			}
			rep := conformance.RunAll(ctx, target, conformance.Scenarios(tc.kind), opts)

			seen := 0
			for _, r := range rep.Results {
				suite, scenario, _ := strings.Cut(r.ID, "/")
				if suite == "generic" {
					if r.Status != conformance.Pass {
						t.Errorf("%s: %s %s\nwire log:\n%s\nstderr:\n%s", r.ID, r.Status, r.Reason, r.WireLog, r.Stderr)
					}
					continue
				}
				seen++
				want, listed := tc.want[scenario]
				if !listed {
					want = expect{status: conformance.Pass}
				}
				if r.Status != want.status || !strings.Contains(r.Reason, want.reason) {
					t.Errorf("%s: got %s %q, want %s with a reason containing %q\nwire log:\n%s\nstderr:\n%s",
						r.ID, r.Status, r.Reason, want.status, want.reason, r.WireLog, r.Stderr)
				}
			}
			if seen != len(kindNames) {
				t.Errorf("%d %s scenarios ran, want %d", seen, tc.kind, len(kindNames))
			}
		})
	}
}
