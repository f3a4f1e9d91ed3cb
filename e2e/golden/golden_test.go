package golden

import (
	"bytes"
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

var update = flag.Bool("update", false, "rewrite the server sections of the golden scripts with what the plugins answer now")

// TestGolden plays every testdata/<dir>/*.txtar against bin/animus-<dir>
// and compares the plugin's answers with the script's golden section.
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
				play(t, binary, file)
			})
		}
	}
	if plugins == 0 {
		t.Fatal("no golden scripts found under testdata/")
	}
}

func play(t *testing.T, binary, file string) {
	original, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Parse(file, original)
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(e2etest.Ctx(t, 2*time.Minute), time.Minute)
	defer cancel()
	got, h, err := Run(ctx, binary, vars(t, root, original), sc, e2etest.Schemas(t))
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
	if *update {
		if err := os.WriteFile(file, sc.Format(original, got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(got) != string(sc.Server) {
		t.Errorf("%s: the plugin's answers differ from the golden (-want +got):\n%s\nIf the change is intended: go test ./e2e/golden -update, and review the diff.",
			file, lineDiff(string(sc.Server), string(got)))
	}
}

// lineDiff is a minimal line diff: the lines each side has that the other
// lacks at the same position, enough to point at the changed frame.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n- " + wl + "\n+ " + gl + "\n")
		}
	}
	return b.String()
}

// vars starts the fakes a script names and returns its placeholders:
// ${PROJECT_ROOT}; ${NOW}, the current second in RFC 3339 (for backends
// that refuse old data); ${FAKELOKI_URL}, an in-process fake Loki; ${RECEIVER_URL}, a webhook
// receiver that answers 204 to every request.
func vars(t *testing.T, root string, script []byte) Vars {
	v := Vars{"PROJECT_ROOT": root, "NOW": time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)}
	if bytes.Contains(script, []byte("${FAKELOKI_URL}")) {
		v["FAKELOKI_URL"] = fakeloki.New(t, fakeloki.Options{}).URL()
	}
	if bytes.Contains(script, []byte("${RECEIVER_URL}")) {
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(rcv.Close)
		v["RECEIVER_URL"] = rcv.URL
	}
	return v
}
