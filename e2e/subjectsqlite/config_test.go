package subjectsqlite

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

func run(t *testing.T, dir string, env map[string]string, stdin bool, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binaries.Path(t, binary), args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if stdin {
		cmd.Stdin = strings.NewReader("")
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// Bad configuration fails at startup: exit 1, a message naming the
// variable on stderr, nothing on stdout. --manifest never fails for it.
func TestBadConfigFailsAtStartup(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ key, value string }{
		{"ANIMUS_SQLITE_KINDS", "task,a/b"},
		{"ANIMUS_SQLITE_KINDS", "subject"},
		{"ANIMUS_SQLITE_AUTO_MIGRATE", "sometimes"},
		{"ANIMUS_SQLITE_DISPATCH_HINTS", `[{"native_status":"X","maps_to":"later"}]`},
		{"ANIMUS_SQLITE_WATCH_POLL_MS", "fast"},
		{"ANIMUS_SQLITE_BUSY_TIMEOUT_MS", "-5"},
	} {
		env := map[string]string{tc.key: tc.value}
		stdout, stderr, code := run(t, dir, env, true)
		if code != 1 || stdout != "" || !strings.Contains(stderr, tc.key) || !strings.Contains(stderr, "invalid configuration") {
			t.Errorf("%s=%s: exit %d, stdout %q, stderr %q", tc.key, tc.value, code, stdout, stderr)
		}
		stdout, stderr, code = run(t, dir, env, false, "--manifest")
		var m struct {
			Capabilities []string `json:"capabilities"`
		}
		if code != 0 || json.Unmarshal([]byte(stdout), &m) != nil || !slices.Contains(m.Capabilities, "subject_kind:task") {
			t.Errorf("--manifest with %s=%s: exit %d %q %q", tc.key, tc.value, code, stdout, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".animus")); !os.IsNotExist(err) {
		t.Error("a failed start or a manifest probe created the database directory")
	}
}

// ANIMUS_SQLITE_KINDS drives the manifest markers, the method table and
// initialize's subject_kinds alike; other kinds' methods are -32601.
func TestKindsFollowConfiguration(t *testing.T) {
	env := map[string]string{"ANIMUS_SQLITE_KINDS": "issue, bug"}
	stdout, _, code := run(t, t.TempDir(), env, false, "--manifest")
	var m struct {
		Capabilities []string `json:"capabilities"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &m) != nil {
		t.Fatalf("manifest: %d %s", code, stdout)
	}
	for _, want := range []string{"subject_kind:issue", "subject_kind:bug", "issue/list", "bug/watch", "subject/unwatch", "subject/create", "health/check"} {
		if !slices.Contains(m.Capabilities, want) {
			t.Errorf("manifest lacks %s", want)
		}
	}
	if slices.ContainsFunc(m.Capabilities, func(c string) bool { return strings.HasPrefix(c, "task/") || c == "subject_kind:task" }) {
		t.Errorf("manifest still advertises task: %v", m.Capabilities)
	}
	h := fakehost.New(t, e2etest.Config(t, binary, newProject(t, env).options()))
	res, err := h.Initialize(e2etest.Ctx(t, 10*time.Second), fakehost.Handshake{Preset: fakehost.PresetDaemon})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Capabilities.SubjectKinds, []string{"issue", "bug"}) || !slices.Equal(res.Capabilities.Methods, m.Capabilities) {
		t.Fatalf("initialize: kinds %v\nmethods %v\nmanifest %v", res.Capabilities.SubjectKinds, res.Capabilities.Methods, m.Capabilities)
	}
	if e := e2etest.Failure(t, h, "task/list", nil); e.Code != -32601 {
		t.Fatalf("task/list on an issue,bug plugin: %d %s", e.Code, e.Message)
	}
	if s := create(t, h, "subject/create", map[string]any{"title": "first kind"}); s.Kind != "issue" {
		t.Fatalf("subject/create defaulted to %s", s.Kind)
	}
}

func TestDatabasePathAndMigrationControl(t *testing.T) {
	// A relative path is created under the project root, directories and all.
	p := newProject(t, map[string]string{"ANIMUS_SQLITE_DB_PATH": "data/deep/subjects.db"})
	create(t, p.start(), "task/create", map[string]any{"title": "x"})
	if _, err := os.Stat(filepath.Join(p.dir, "data", "deep", "subjects.db")); err != nil {
		t.Fatalf("database not at the configured relative path: %v", err)
	}

	// Auto-migration off: a database behind the schema refuses initialize
	// with a message saying how to fix it; `migrate` fixes it.
	p = newProject(t, map[string]string{"ANIMUS_SQLITE_AUTO_MIGRATE": "false"})
	if err := p.mkdirDB(); err != nil {
		t.Fatal(err)
	}
	if out, err := tool(t, "rustdb", "-db", p.dbPath()).Output(); err != nil {
		t.Fatalf("rustdb: %v %s", err, out)
	}
	h := fakehost.New(t, e2etest.Config(t, binary, p.options()))
	_, err := h.Initialize(e2etest.Ctx(t, 10*time.Second), fakehost.Handshake{Preset: fakehost.PresetDaemon})
	if err == nil || !strings.Contains(err.Error(), "ANIMUS_SQLITE_AUTO_MIGRATE") {
		t.Fatalf("initialize on an unmigrated database with auto-migration off: %v", err)
	}
	stdout, stderr, code := run(t, p.dir, p.env, false, "migrate")
	if code != 0 || !strings.Contains(stdout, "schema version 0 -> 2") {
		t.Fatalf("migrate: %d %q %q", code, stdout, stderr)
	}
	checkRustRows(t, p.start())
}
