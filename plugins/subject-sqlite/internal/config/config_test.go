package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/subjects"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadDefaults(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Rules: subjects.Rules{Kinds: []string{"task"}, WatchPoll: 250 * time.Millisecond}, DBPath: DefaultDBPath, AutoMigrate: true, BusyTimeout: 5 * time.Second}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v", c)
	}
}

func TestLoadValues(t *testing.T) {
	c, err := Load(env(map[string]string{
		EnvDBPath: " /tmp/x.db ", EnvKinds: " issue, , bug ", EnvAutoMigrate: "OFF",
		EnvDispatchHints: `[{"native_status":"In Review","maps_to":"in_progress","dispatch_label":"code-review"},{"native_status":"Todo","maps_to":"ready","dispatch_label":""}]`,
		EnvWatchPollMS:   "20", EnvBusyTimeoutMS: "100",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.DBPath != "/tmp/x.db" || !reflect.DeepEqual(c.Kinds, []string{"issue", "bug"}) || c.AutoMigrate ||
		c.WatchPoll != 20*time.Millisecond || c.BusyTimeout != 100*time.Millisecond {
		t.Fatalf("got %+v", c)
	}
	if len(c.Hints) != 2 || c.Hints[0].MapsTo != "in-progress" || *c.Hints[0].DispatchLabel != "code-review" || c.Hints[1].DispatchLabel != nil {
		t.Fatalf("hints %+v", c.Hints)
	}
}

func TestLoadRejects(t *testing.T) {
	for _, tc := range []struct {
		name, key, value, mention string
		kinds                     []string // best-effort kinds for --manifest
	}{
		{"reserved kind", EnvKinds, "subject", "reserved", []string{"task"}},
		{"slash", EnvKinds, "a/b,issue", "invalid kind", []string{"issue"}},
		{"colon", EnvKinds, "a:b", "invalid kind", []string{"task"}},
		{"glob", EnvKinds, "foo.*", "invalid kind", []string{"task"}},
		{"dollar", EnvKinds, "$x", "invalid kind", []string{"task"}},
		{"space", EnvKinds, "my kind", "invalid kind", []string{"task"}},
		{"duplicate", EnvKinds, "task,task", "twice", []string{"task"}},
		{"only commas", EnvKinds, ",,", "no kind", []string{"task"}},
		{"bool", EnvAutoMigrate, "maybe", "true or false", []string{"task"}},
		{"hints json", EnvDispatchHints, `{`, "JSON list", []string{"task"}},
		{"hints status", EnvDispatchHints, `[{"native_status":"X","maps_to":"later"}]`, "invalid status", []string{"task"}},
		{"hints missing maps_to", EnvDispatchHints, `[{"native_status":"X"}]`, "maps_to", []string{"task"}},
		{"hints duplicate", EnvDispatchHints, `[{"native_status":"X","maps_to":"done"},{"native_status":"X","maps_to":"ready"}]`, "twice", []string{"task"}},
		{"hints empty native", EnvDispatchHints, `[{"native_status":"","maps_to":"done"}]`, "native_status", []string{"task"}},
		{"poll", EnvWatchPollMS, "0", EnvWatchPollMS, []string{"task"}},
		{"busy", EnvBusyTimeoutMS, "abc", EnvBusyTimeoutMS, []string{"task"}},
	} {
		c, err := Load(env(map[string]string{tc.key: tc.value}))
		if err == nil || !strings.Contains(err.Error(), tc.mention) || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: error %v does not name %s and mention %q", tc.name, err, tc.key, tc.mention)
		}
		if !reflect.DeepEqual(c.Kinds, tc.kinds) {
			t.Errorf("%s: best-effort kinds %v, want %v", tc.name, c.Kinds, tc.kinds)
		}
	}
}
