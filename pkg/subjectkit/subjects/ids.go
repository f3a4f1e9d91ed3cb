package subjects

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
)

// legacyPrefix is the Rust plugin's id prefix; such ids are still accepted
// (subject.md §7 A3) and resolve by their native part.
const legacyPrefix = "sqlite"

// idRef is a caller's subject id: "<kind>:<ULID>", a bare "<ULID>", or a
// legacy "sqlite:<ULID>".
type idRef struct {
	raw, prefix, native string
}

func parseRef(id string) idRef {
	if prefix, native, ok := strings.Cut(id, ":"); ok {
		return idRef{raw: id, prefix: prefix, native: native}
	}
	return idRef{raw: id, native: id}
}

// possibleIn is the cheap check before touching the database: a prefix
// that is neither legacy nor one of kinds can never name a visible subject.
func (r idRef) possibleIn(kinds []string) bool {
	return r.native != "" && (r.prefix == "" || r.prefix == legacyPrefix || slices.Contains(kinds, r.prefix))
}

// visibleIn reports whether s may be returned for this id to a caller
// scoped to kinds: its kind is in scope and the id's prefix, if it names
// a kind, names this one. A subject of another kind is "not found", never
// returned (subject.md §7 A5/A6).
func (r idRef) visibleIn(kinds []string) func(*model.Subject) bool {
	return func(s *model.Subject) bool {
		return slices.Contains(kinds, s.Kind) && (r.prefix == "" || r.prefix == legacyPrefix || r.prefix == s.Kind)
	}
}

// watchKey renders a request id the way the daemon's unwatch names it:
// a number as its decimal text, a string as its content.
func watchKey(id json.RawMessage) string {
	var s string
	if json.Unmarshal(id, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(id))
}
