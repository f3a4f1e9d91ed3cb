package schemacheck

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// EnvSharedDir names the environment variable that points at the shared/
// directory (the one that contains schemas/). It wins over the directory walk
// so CI layouts that put shared/ somewhere unusual still work.
const EnvSharedDir = "ANIMUS_SHARED_DIR"

// FindSharedDir returns the shared/ directory holding schemas/.
//
// Order: $ANIMUS_SHARED_DIR, then a walk up from the working directory that
// looks for "<dir>/shared/schemas" at each level. The repository lives at
// <root>/main with shared/ beside it as <root>/shared (and CI clones the repo
// elsewhere with shared/ copied next to the clone), so the walk finds it from
// any package directory inside the repository.
func FindSharedDir() (string, error) {
	if d := os.Getenv(EnvSharedDir); d != "" {
		if !isDir(filepath.Join(d, "schemas")) {
			return "", fmt.Errorf("schemacheck: %s=%q has no schemas/ directory", EnvSharedDir, d)
		}
		return filepath.Abs(d)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("schemacheck: working directory: %w", err)
	}
	for dir := wd; ; {
		cand := filepath.Join(dir, "shared")
		if isDir(filepath.Join(cand, "schemas")) {
			return cand, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", errors.New("schemacheck: shared/schemas not found walking up from " + wd +
		" (set " + EnvSharedDir + " to the shared/ directory)")
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

var defaultSet = sync.OnceValues(func() (*Set, error) {
	dir, err := FindSharedDir()
	if err != nil {
		return nil, err
	}
	return Load(dir)
})

// Default loads the schemas from FindSharedDir once per process and returns
// the same Set afterwards (compiling ~120 schemas is cheap but not free, and
// every fake host in a test binary wants them).
func Default() (*Set, error) { return defaultSet() }

// Load compiles every shared/schemas/<crate>/<Type>.json below sharedDir.
// A missing or empty schemas directory is an error.
func Load(sharedDir string) (*Set, error) {
	root := filepath.Join(sharedDir, "schemas")
	crates, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("schemacheck: %w", err)
	}
	c := jsonschema.NewCompiler()
	// The files declare 2020-12 themselves; this only matters for a file that
	// forgets "$schema".
	c.DefaultDraft(jsonschema.Draft2020)
	s := &Set{dir: sharedDir, schemas: map[string]*jsonschema.Schema{}}
	for _, crate := range crates {
		if !crate.IsDir() {
			continue
		}
		files, err := filepath.Glob(filepath.Join(root, crate.Name(), "*.json"))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			typ := strings.TrimSuffix(filepath.Base(f), ".json")
			if typ == "_all" { // bundle with no root schema, see doc.go
				continue
			}
			sch, err := compileFile(c, f)
			if err != nil {
				return nil, fmt.Errorf("schemacheck: %s/%s: %w", crate.Name(), typ, err)
			}
			s.schemas[crate.Name()+"/"+typ] = sch
		}
	}
	if len(s.schemas) == 0 {
		return nil, fmt.Errorf("schemacheck: no schemas found under %s", root)
	}
	s.results = copyTable(resultTypes)
	s.notifications = copyTable(notificationTypes)
	for m, ref := range s.results {
		if !s.Has(ref.Crate, ref.Type) {
			return nil, fmt.Errorf("schemacheck: result table maps %s to missing schema %s", m, ref)
		}
	}
	return s, nil
}

func compileFile(c *jsonschema.Compiler, path string) (*jsonschema.Schema, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	// Registering the parsed document ourselves keeps the compiler from ever
	// needing a loader: every "$ref" in these files is internal.
	if err := c.AddResource(abs, doc); err != nil {
		return nil, err
	}
	return c.Compile(abs)
}
