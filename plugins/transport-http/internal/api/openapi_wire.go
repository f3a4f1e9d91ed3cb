package api

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"sort"
	"strings"
)

// wireFS holds verbatim copies of the daemon's published JSON Schemas
// (shared/schemas/<crate>/<Type>.json) for the types the HTTP API carries.
// They are copies, not links, so the binary needs nothing at run time; a
// package-level variable because go:embed allows nothing else.
//
//go:embed wireschema
var wireFS embed.FS

// wireSchemas turns the embedded files into components/schemas entries.
// Each file is a standalone draft 2020-12 schema whose references point at
// its own $defs ("#/$defs/SubjectId"). Inside an OpenAPI document "#" is
// the document, so the $defs are hoisted next to the file's own schema and
// the references rewritten to "#/components/schemas/<name>". Two crates
// defining one name differently would make that ambiguous, so any such
// clash is an error rather than a silent pick.
func wireSchemas() (map[string]obj, error) {
	out := map[string]obj{}
	defs := map[string]obj{}
	err := fs.WalkDir(wireFS, "wireschema", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".json" {
			return err
		}
		raw, err := wireFS.ReadFile(p)
		if err != nil {
			return err
		}
		var schema obj
		if err := json.Unmarshal(raw, &schema); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		name := strings.TrimSuffix(path.Base(p), ".json")
		if title, _ := schema["title"].(string); title != name {
			return fmt.Errorf("%s: title %q does not name the file", p, title)
		}
		if _, dup := out[name]; dup {
			return fmt.Errorf("%s: %s is defined by two crates", p, name)
		}
		own, _ := schema["$defs"].(obj)
		delete(schema, "$defs")
		delete(schema, "$schema") // the document's dialect is already 2020-12
		out[name] = schema
		for n, def := range own {
			d, ok := def.(obj)
			if !ok {
				return fmt.Errorf("%s: $defs/%s is not a schema", p, n)
			}
			if prev, seen := defs[n]; seen && !sameShape(prev, d) {
				return fmt.Errorf("%s: $defs/%s differs from another file's", p, n)
			}
			defs[n] = d
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for n, d := range defs {
		if top, ok := out[n]; ok {
			if !sameShape(top, d) {
				return nil, fmt.Errorf("$defs/%s differs from %s.json", n, n)
			}
			continue // the type's own file carries its description
		}
		out[n] = d
	}
	for n, s := range out {
		if err := rewriteRefs(s, true); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
	}
	return out, nil
}

// sameShape compares two schemas of one type, ignoring the annotations a
// $defs copy drops or rewords at its top.
func sameShape(a, b obj) bool {
	strip := func(s obj) obj {
		c := obj{}
		for k, v := range s {
			if k != "title" && k != "description" && k != "$schema" && k != "$defs" {
				c[k] = v
			}
		}
		return c
	}
	return reflect.DeepEqual(strip(a), strip(b))
}

// rewriteRefs points every local $defs reference at components/schemas. Any
// other reference, or a nested $defs, has no place to go and is an error.
func rewriteRefs(v any, root bool) error {
	switch x := v.(type) {
	case obj:
		if _, ok := x["$defs"]; ok && !root {
			return fmt.Errorf("nested $defs")
		}
		if r, ok := x["$ref"]; ok {
			s, _ := r.(string)
			name, found := strings.CutPrefix(s, "#/$defs/")
			if !found {
				return fmt.Errorf("unsupported $ref %v", r)
			}
			x["$ref"] = "#/components/schemas/" + name
		}
		for _, k := range sortedKeys(x) {
			if err := rewriteRefs(x[k], false); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := rewriteRefs(e, false); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedKeys(m obj) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
