package pluginkit

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// ProjectBinding is init_extensions.project_binding, sent by the queue,
// durable-store and notifier clients.
type ProjectBinding struct {
	ProjectRoot string `json:"project_root"`
	RepoScope   string `json:"repo_scope,omitempty"`
}

// ErrNoBinding is what InitializeParams.Binding reports when the host sent
// no project_binding, or sent null: the generic handshake and the daemon's
// health probe do, and a plugin must still initialize.
var ErrNoBinding = errors.New("initialize carried no init_extensions.project_binding")

// BindingProblem says what is wrong with a project_binding that was sent.
// Plugins word their errors differently (the references do), so they
// switch on the problem rather than reuse one message.
type BindingProblem int

const (
	// BindingNotObject: project_binding is not a JSON object.
	BindingNotObject BindingProblem = iota + 1
	// BindingRootMissing: project_root is absent, not a string or empty.
	BindingRootMissing
	// BindingRootRelative: project_root is not an absolute path.
	BindingRootRelative
)

// BindingError is a project_binding that was sent but cannot be used.
type BindingError struct{ Problem BindingProblem }

func (e *BindingError) Error() string {
	switch e.Problem {
	case BindingNotObject:
		return "init_extensions.project_binding must be an object with a project_root"
	case BindingRootMissing:
		return "init_extensions.project_binding.project_root must be a non-empty string"
	default:
		return "init_extensions.project_binding.project_root must be an absolute path"
	}
}

// Binding reads init_extensions.project_binding. It tells the three cases
// apart: a usable binding (nil error, ProjectRoot absolute and cleaned),
// none at all (ErrNoBinding), and one that was sent but is malformed (a
// *BindingError).
func (p InitializeParams) Binding() (ProjectBinding, error) {
	raw, ok := p.InitExtensions["project_binding"]
	if !ok || rustjson.IsNull(raw) {
		return ProjectBinding{}, ErrNoBinding
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return ProjectBinding{}, &BindingError{Problem: BindingNotObject}
	}
	var b ProjectBinding
	if v, ok := fields["project_root"]; !ok || json.Unmarshal(v, &b.ProjectRoot) != nil || b.ProjectRoot == "" {
		return ProjectBinding{}, &BindingError{Problem: BindingRootMissing}
	}
	if v, ok := fields["repo_scope"]; ok {
		_ = json.Unmarshal(v, &b.RepoScope) // informative only; a bad value is ignored
	}
	if !filepath.IsAbs(b.ProjectRoot) {
		return ProjectBinding{}, &BindingError{Problem: BindingRootRelative}
	}
	b.ProjectRoot = filepath.Clean(b.ProjectRoot)
	return b, nil
}

// ProjectRoot is the project a plugin serves: the bound project_root when
// the host sent a usable binding, else the working directory, which the
// daemon sets to the project root when it spawns a plugin. It is "" only
// when neither is known.
func (p InitializeParams) ProjectRoot() string {
	if b, err := p.Binding(); err == nil {
		return b.ProjectRoot
	}
	if wd, err := os.Getwd(); err == nil {
		return wd
	}
	return ""
}

// ProjectPath is the one rule that turns a configured file location into
// an absolute path: override when set (a relative override is resolved
// against the project root, never against whatever directory the process
// happens to run in), else defaultRel under the project root.
func ProjectPath(projectRoot, override, defaultRel string) string {
	p := override
	if p == "" {
		p = defaultRel
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(projectRoot, p)
	}
	return filepath.Clean(p)
}
