package golden

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
	script "github.com/animus-plugins/animus-plugins/pkg/golden"
)

var update = flag.Bool("update", false, "rewrite the server sections of the golden scripts with what the plugins answer now")

// sharedScripts lists, per script directory, the other binaries that
// serve exactly the wire surface of animus-<dir> over a different store
// and so must answer its scripts, unchanged, with the same golden after
// Equivalent. store gives one script a fresh, empty store of the
// binary's (its environment), where animus-<dir> gets a fresh project
// root.
var sharedScripts = map[string][]struct {
	binary string
	store  func(t *testing.T) map[string]string
}{
	"queue-sqlite": {{pgns.Queue.Binary, func(t *testing.T) map[string]string {
		env := map[string]string{}
		for _, kv := range pgns.Queue.New(t).Env() {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		return env
	}}},
	"durable-sqlite": {{pgns.Durable.Binary, func(t *testing.T) map[string]string {
		return pgns.Durable.New(t).Map(nil)
	}}},
	// animus-subject-postgres serves animus-subject-sqlite's subjects
	// (pkg/subjectkit) over a PostgreSQL namespace.
	"subject-sqlite": {{pgns.Subject.Binary, func(t *testing.T) map[string]string {
		return pgns.Subject.New(t).Map(nil)
	}}},
}

// TestGolden plays every testdata/<dir>/*.txtar against bin/animus-<dir>
// and compares the plugin's answers with the script's golden section; it
// plays them again against each binary sharedScripts lists for <dir>
// (subtests <binary>/<dir>/<script>), comparing after Equivalent.
func TestGolden(t *testing.T) {
	dirs, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	plugins := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		files, _ := filepath.Glob(filepath.Join("testdata", d.Name(), "*.txtar"))
		if len(files) == 0 {
			t.Errorf("testdata/%s holds no .txtar script", d.Name())
			continue
		}
		plugins++
		binary := binaries.Path(t, "animus-"+d.Name())
		for _, file := range files {
			name := d.Name() + "/" + strings.TrimSuffix(filepath.Base(file), ".txtar")
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				play(t, binary, file, nil)
			})
		}
		for _, shared := range sharedScripts[d.Name()] {
			for _, file := range files {
				name := shared.binary + "/" + d.Name() + "/" + strings.TrimSuffix(filepath.Base(file), ".txtar")
				t.Run(name, func(t *testing.T) {
					if *update {
						t.Skip("-update rewrites the goldens from animus-" + d.Name() + " alone")
					}
					t.Parallel()
					play(t, binaries.Path(t, shared.binary), file, shared.store(t))
				})
			}
		}
	}
	if plugins == 0 {
		t.Fatal("no golden scripts found under testdata/")
	}
}

// play plays file against binary. store, when non-nil, is the
// environment of a store of the binary's own: binary is one of
// sharedScripts, compared with the golden after Equivalent.
func play(t *testing.T, binary, file string, store map[string]string) {
	original, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := script.Parse(file, original)
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(e2etest.Ctx(t, 2*time.Minute), time.Minute)
	defer cancel()
	got, h, err := Run(ctx, binary, vars(t, root, original), store, sc, e2etest.Schemas(t))
	if h != nil {
		defer func() {
			h.Close()
			if v := h.Violations(); len(v) > 0 {
				t.Errorf("protocol violations:\n  %s", strings.Join(v, "\n  "))
			}
			if t.Failed() {
				t.Logf("wire log:\n%s\nplugin stderr:\n%s", h.WireLog(), h.Stderr())
			}
		}()
	}
	if err != nil {
		t.Fatal(err)
	}
	if store != nil {
		if want, got := string(script.Equivalent(sc.Server)), string(script.Equivalent(got)); got != want {
			t.Errorf("%s: %s answers differently from the golden, after normalising plugin_info's name and description (-want +got):\n%s\nThe golden is animus-%s's: %s must serve the same behaviour.",
				file, filepath.Base(binary), script.LineDiff(want, got), filepath.Base(filepath.Dir(file)), filepath.Base(binary))
		}
		return
	}
	if *update {
		if err := os.WriteFile(file, sc.Format(original, got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(got) != string(sc.Server) {
		t.Errorf("%s: the plugin's answers differ from the golden (-want +got):\n%s\nIf the change is intended: go test ./e2e/golden -update, and review the diff.",
			file, script.LineDiff(string(sc.Server), string(got)))
	}
}

// vars returns the script's placeholders: the standard ones (see
// script.StandardVars) and ${FAKELOKI_URL}, an in-process fake Loki.
func vars(t *testing.T, root string, src []byte) script.Vars {
	v := script.StandardVars(t, root, src)
	if bytes.Contains(src, []byte("${FAKELOKI_URL}")) {
		v["FAKELOKI_URL"] = fakeloki.New(t, fakeloki.Options{}).URL()
	}
	return v
}
