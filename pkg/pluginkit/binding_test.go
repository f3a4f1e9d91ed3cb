package pluginkit

import (
	"encoding/json"
	"errors"
	"os"
	"testing"
)

func TestBinding(t *testing.T) {
	tests := []struct {
		name    string
		ext     string // init_extensions, "" for none
		want    ProjectBinding
		absent  bool
		problem BindingProblem
	}{
		{name: "no init_extensions", absent: true},
		{name: "other extensions only", ext: `{"memory":{}}`, absent: true},
		{name: "null", ext: `{"project_binding":null}`, absent: true},
		{name: "valid", ext: `{"project_binding":{"project_root":"/srv/p/../proj","repo_scope":"project-1"}}`,
			want: ProjectBinding{ProjectRoot: "/srv/proj", RepoScope: "project-1"}},
		{name: "valid with unknown fields", ext: `{"project_binding":{"project_root":"/p","extra":1}}`,
			want: ProjectBinding{ProjectRoot: "/p"}},
		{name: "bad repo_scope is ignored", ext: `{"project_binding":{"project_root":"/p","repo_scope":7}}`,
			want: ProjectBinding{ProjectRoot: "/p"}},
		{name: "a string", ext: `{"project_binding":"/p"}`, problem: BindingNotObject},
		{name: "an array", ext: `{"project_binding":["/p"]}`, problem: BindingNotObject},
		{name: "no project_root", ext: `{"project_binding":{}}`, problem: BindingRootMissing},
		{name: "project_root a number", ext: `{"project_binding":{"project_root":7}}`, problem: BindingRootMissing},
		{name: "project_root empty", ext: `{"project_binding":{"project_root":""}}`, problem: BindingRootMissing},
		{name: "project_root relative", ext: `{"project_binding":{"project_root":"proj"}}`, problem: BindingRootRelative},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p InitializeParams
			if tt.ext != "" {
				if err := json.Unmarshal([]byte(tt.ext), &p.InitExtensions); err != nil {
					t.Fatal(err)
				}
			}
			got, err := p.Binding()
			var be *BindingError
			switch {
			case tt.absent:
				if !errors.Is(err, ErrNoBinding) {
					t.Fatalf("Binding() err = %v, want ErrNoBinding", err)
				}
			case tt.problem != 0:
				if !errors.As(err, &be) || be.Problem != tt.problem || be.Error() == "" {
					t.Fatalf("Binding() err = %v, want problem %d", err, tt.problem)
				}
			case err != nil || got != tt.want:
				t.Fatalf("Binding() = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestProjectRoot(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	bound := InitializeParams{InitExtensions: map[string]json.RawMessage{"project_binding": json.RawMessage(`{"project_root":"/srv/proj"}`)}}
	malformed := InitializeParams{InitExtensions: map[string]json.RawMessage{"project_binding": json.RawMessage(`{"project_root":"rel"}`)}}
	for _, tt := range []struct {
		name string
		p    InitializeParams
		want string
	}{
		{"bound", bound, "/srv/proj"},
		{"unbound: the working directory", InitializeParams{}, wd},
		{"malformed: the working directory", malformed, wd},
	} {
		if got := tt.p.ProjectRoot(); got != tt.want {
			t.Errorf("%s: ProjectRoot() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestProjectPath(t *testing.T) {
	tests := []struct{ root, override, def, want string }{
		{"/srv/p", "", ".animus/q.sqlite", "/srv/p/.animus/q.sqlite"},
		{"/srv/p", "data/q.db", ".animus/q.sqlite", "/srv/p/data/q.db"},
		{"/srv/p", "../shared/q.db", ".animus/q.sqlite", "/srv/shared/q.db"},
		{"/srv/p", "/var/lib/q.db", ".animus/q.sqlite", "/var/lib/q.db"},
		{"/srv/p", "/var/lib/../q.db", "x", "/var/q.db"},
	}
	for _, tt := range tests {
		if got := ProjectPath(tt.root, tt.override, tt.def); got != tt.want {
			t.Errorf("ProjectPath(%q, %q, %q) = %q, want %q", tt.root, tt.override, tt.def, got, tt.want)
		}
	}
}
