package golden

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/pluginkittest"
)

// StandardVars are the placeholders every runner provides: PROJECT_ROOT
// (root); NOW, the current second in RFC 3339 (for backends that refuse
// old data); and, when the script names it, RECEIVER_URL, a webhook
// receiver on 127.0.0.1 that answers 204 to every request.
func StandardVars(t testing.TB, root string, script []byte) Vars {
	v := Vars{"PROJECT_ROOT": root, "NOW": time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)}
	if bytes.Contains(script, []byte("${RECEIVER_URL}")) {
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(rcv.Close)
		v["RECEIVER_URL"] = rcv.URL
	}
	return v
}

// ScriptDir is where the golden scripts of plugin dir live, seen from a
// plugin module's package directory (plugins/<dir> or examples/<dir>).
func ScriptDir(dir string) string {
	return filepath.Join("..", "..", "e2e", "golden", "testdata", dir)
}

// PluginFunc builds a plugin as its main function does, reading its
// environment through getenv.
type PluginFunc func(getenv func(string) string) pluginkit.Plugin

// RunOptions adjust RunScripts.
type RunOptions struct {
	// Vars adds a plugin's own placeholders (a fake backend's URL) to the
	// standard ones, for the script it is given.
	Vars func(t *testing.T, script []byte) Vars
	// Env overlays the script's environment, per script: a store of its
	// own for a plugin whose state is not keyed by the project root (a
	// PostgreSQL namespace).
	Env func(t *testing.T) map[string]string
	// Equivalent, when set, rewrites both the golden and the answers
	// before they are compared: for a plugin playing another plugin's
	// scripts (Equivalent), the names that differ by design.
	Equivalent func([]byte) []byte
}

// RunScripts plays every *.txtar in scriptDir against the plugin built by
// build, in process, and compares the answers with each script's golden.
// Each script gets a fresh project directory, which is also the working
// directory while it runs (the daemon spawns plugins there), so scripts
// run one after another.
func RunScripts(t *testing.T, scriptDir string, build PluginFunc, opts RunOptions) {
	files, err := filepath.Glob(filepath.Join(scriptDir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no golden scripts in %s", scriptDir)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			runScript(t, file, build, opts)
		})
	}
}

func runScript(t *testing.T, file string, build PluginFunc, opts RunOptions) {
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Parse(file, src)
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	vars := StandardVars(t, root, src)
	if opts.Vars != nil {
		for k, v := range opts.Vars(t, src) {
			vars[k] = v
		}
	}
	env := sc.ExpandedEnv(vars)
	if opts.Env != nil {
		for k, v := range opts.Env(t) {
			env[k] = v
		}
	}
	p := build(func(name string) string { return env[name] })
	version := p.Version
	if version == "" {
		version = pluginkit.BuildVersion()
	}
	h := pluginkittest.Start(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got, err := Play(ctx, hostConn{h}, vars, version, sc)
	if err != nil {
		t.Fatal(err)
	}
	want := sc.Server
	if opts.Equivalent != nil {
		want, got = opts.Equivalent(want), opts.Equivalent(got)
	}
	if string(got) != string(want) {
		t.Errorf("%s: the plugin's answers in process differ from the golden (-want +got):\n%s",
			file, LineDiff(string(want), string(got)))
	}
}
