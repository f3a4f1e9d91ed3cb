package subjectsqlite

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

const binary = "animus-subject-sqlite"

// testKinds are the kinds the tests configure; their <kind>/… results are
// checked against the same schemas as subject/… (schemacheck lists only the
// kind-independent methods).
var testKinds = []string{"task", "issue", "bug"}

// subjectSchemas is the upstream set plus result rows for the kinds the
// tests configure beyond "task", so issue/* and bug/* replies are checked
// as strictly as task/*.
var subjectSchemas = sync.OnceValues(func() (*schemacheck.Set, error) {
	set, err := schemacheck.Default()
	if err != nil {
		return nil, err
	}
	for _, k := range testKinds {
		for verb, typ := range map[string]string{"list": "SubjectList", "get": "Subject", "create": "Subject",
			"update": "Subject", "status": "Subject", "schema": "SubjectSchema", "delete": "DeleteSubjectResponse"} {
			if err := set.RegisterResult(k+"/"+verb, schemacheck.SubjectProtocol, typ); err != nil {
				return nil, err
			}
		}
	}
	return set, nil
})

func schemas(t testing.TB) *schemacheck.Set {
	t.Helper()
	set, err := subjectSchemas()
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// project is one project root whose plugin processes share a database.
type project struct {
	t   testing.TB
	dir string
	env map[string]string
}

func newProject(t testing.TB, env map[string]string) *project {
	if env == nil {
		env = map[string]string{}
	}
	return &project{t: t, dir: e2etest.Project(t), env: env}
}

// dbPath is where the plugin keeps the database by default.
func (p *project) dbPath() string { return filepath.Join(p.dir, ".animus", "subjects", "sqlite.db") }

// options is how the daemon's subject router spawns a plugin process for
// this project: the generic host's environment and handshake, with the
// result schemas of every kind the tests configure.
func (p *project) options() e2etest.Options {
	return e2etest.Options{Dir: p.dir, Env: p.env, Schemas: schemas(p.t)}
}

// start spawns a plugin process the way the daemon does and completes the
// daemon's handshake.
func (p *project) start() *fakehost.Host {
	p.t.Helper()
	return e2etest.Spawn(p.t, binary, p.options())
}

// subject is the wire Subject as a test reads it.
type subject struct {
	ID             string                     `json:"id"`
	Kind           string                     `json:"kind"`
	Title          string                     `json:"title"`
	Description    *string                    `json:"description"`
	Status         string                     `json:"status"`
	Priority       *int                       `json:"priority"`
	Assignee       *string                    `json:"assignee"`
	Labels         []string                   `json:"labels"`
	Parent         *string                    `json:"parent"`
	Children       []string                   `json:"children"`
	URL            *string                    `json:"url"`
	CreatedAt      string                     `json:"created_at"`
	UpdatedAt      string                     `json:"updated_at"`
	Custom         map[string]json.RawMessage `json:"custom"`
	NativeStatus   *string                    `json:"native_status"`
	StatusMetadata json.RawMessage            `json:"status_metadata"`
	Attachments    []json.RawMessage          `json:"attachments"`
}

type subjectList struct {
	Subjects   []subject `json:"subjects"`
	NextCursor *string   `json:"next_cursor"`
	FetchedAt  string    `json:"fetched_at"`
	Total      *int      `json:"total"`
}

func create(t testing.TB, h *fakehost.Host, method string, params any) subject {
	t.Helper()
	return e2etest.Decode[subject](t, e2etest.Call(t, h, method, params))
}

func list(t testing.TB, h *fakehost.Host, method string, params any) subjectList {
	t.Helper()
	return e2etest.Decode[subjectList](t, e2etest.Call(t, h, method, params))
}

func ids(l subjectList) []string {
	out := make([]string, len(l.Subjects))
	for i, s := range l.Subjects {
		out[i] = s.ID
	}
	return out
}

// nativeOf is the ULID part of an id.
func nativeOf(id string) string {
	_, n, _ := strings.Cut(id, ":")
	return n
}

// tool runs the plugin module's test tool (direct database access).
func tool(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	root, err := binaries.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, ".cache", "e2e-bin", "subject-sqlite-testtool")
	toolOnce.Do(func() {
		cmd := exec.Command("go", "build", "-o", out, "./plugins/subject-sqlite/internal/testtool")
		cmd.Dir = root
		if msg, err := cmd.CombinedOutput(); err != nil {
			toolErr = err
			t.Logf("%s", msg)
		}
	})
	if toolErr != nil {
		t.Fatalf("building the test tool: %v", toolErr)
	}
	cmd := exec.Command(out, args...)
	cmd.Stderr = os.Stderr
	return cmd
}

var (
	toolOnce sync.Once
	toolErr  error
)

// declaredEnv is the plugin's env_required, given to fakehost so parallel
// spawns skip the manifest probe (one test checks the manifest itself).
var declaredEnv = []string{"ANIMUS_SQLITE_DB_PATH", "ANIMUS_SQLITE_KINDS", "ANIMUS_SQLITE_AUTO_MIGRATE",
	"ANIMUS_SQLITE_DISPATCH_HINTS", "ANIMUS_SQLITE_WATCH_POLL_MS", "ANIMUS_SQLITE_BUSY_TIMEOUT_MS", "ANIMUS_PLUGIN_LOG_LEVEL"}

func (p *project) mkdirDB() error { return os.MkdirAll(filepath.Dir(p.dbPath()), 0o700) }
