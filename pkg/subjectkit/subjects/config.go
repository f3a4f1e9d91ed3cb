package subjects

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
)

// Rules are the settings every subject backend shares: the kinds it
// serves, the dispatch hints, and how often watches poll the change log.
// Each plugin reads them under its own prefix (ANIMUS_SQLITE_KINDS,
// ANIMUS_SUBJECT_PG_KINDS, …).
type Rules struct {
	Kinds     []string
	Hints     model.Hints
	WatchPoll time.Duration
}

// Defaults.
const (
	DefaultKind      = "task"
	DefaultWatchPoll = 250 * time.Millisecond
)

// DefaultRules serve the kind task with no hints.
func DefaultRules() Rules {
	return Rules{Kinds: []string{DefaultKind}, WatchPoll: DefaultWatchPoll}
}

// RuleNames are the variables LoadRules reads under prefix.
func RuleNames(prefix string) (kinds, hints, watchPollMS string) {
	return prefix + "_KINDS", prefix + "_DISPATCH_HINTS", prefix + "_WATCH_POLL_MS"
}

// RulesEnv declares the rule variables (kinds, hints, poll) for the
// manifest's env_required; poll says what a watch's poll is for.
func RulesEnv(prefix, poll string) []pluginkit.EnvVar {
	kinds, hints, watchPoll := RuleNames(prefix)
	return []pluginkit.EnvVar{
		{Name: kinds, Description: "comma-separated subject kinds served (default task); sets the subject_kind: markers and <kind>/ methods"},
		{Name: hints, Description: `JSON list of StatusDispatchHint {native_status, maps_to, dispatch_label?, description?}`},
		{Name: watchPoll, Description: "how often watches poll for " + poll + ", in ms (default 250)"},
	}
}

// LoadRules reads the rules under prefix. On error it still returns
// usable rules (invalid values replaced by defaults, invalid kinds
// dropped), so --manifest can describe the plugin; serving must not start.
func LoadRules(getenv func(string) string, prefix string) (Rules, error) {
	envKinds, envHints, envPoll := RuleNames(prefix)
	r := DefaultRules()
	var errs []error
	if v := getenv(envKinds); strings.TrimSpace(v) != "" {
		kinds, err := parseKinds(envKinds, v)
		if len(kinds) > 0 {
			r.Kinds = kinds
		}
		errs = append(errs, err)
	}
	if v := strings.TrimSpace(getenv(envHints)); v != "" {
		hints, err := parseHints(envHints, v)
		if err == nil {
			r.Hints = hints
		}
		errs = append(errs, err)
	}
	var err error
	if r.WatchPoll, err = Millis(getenv, envPoll, DefaultWatchPoll, 10, 60_000); err != nil {
		errs = append(errs, err)
	}
	return r, errors.Join(errs...)
}

// parseKinds splits, trims and validates kinds (subject.md §7 A14). Valid
// kinds are returned even when others are rejected.
func parseKinds(name, v string) ([]string, error) {
	var kinds []string
	var errs []error
	for _, k := range strings.Split(v, ",") {
		k = strings.TrimSpace(k)
		switch {
		case k == "":
			continue
		case k == "subject":
			errs = append(errs, fmt.Errorf("%s: kind %q is reserved for the subject/ methods", name, k))
		case strings.HasPrefix(k, "$"), strings.ContainsAny(k, "/:*"), strings.IndexFunc(k, unicode.IsSpace) >= 0:
			errs = append(errs, fmt.Errorf("%s: invalid kind %q: a kind must not start with $ or contain '/', ':', '*' or spaces", name, k))
		case slices.Contains(kinds, k):
			errs = append(errs, fmt.Errorf("%s: kind %q is listed twice", name, k))
		default:
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%s: no kind given (want e.g. %q)", name, "task,issue"))
	}
	return kinds, errors.Join(errs...)
}

func parseHints(name, v string) (model.Hints, error) {
	var raw []struct {
		NativeStatus  *string `json:"native_status"`
		MapsTo        *string `json:"maps_to"`
		DispatchLabel *string `json:"dispatch_label"`
		Description   *string `json:"description"`
	}
	if err := json.Unmarshal([]byte(v), &raw); err != nil {
		return nil, fmt.Errorf("%s: not a JSON list of {native_status, maps_to, dispatch_label?, description?}: %v", name, err)
	}
	hints := make(model.Hints, 0, len(raw))
	for i, r := range raw {
		if r.NativeStatus == nil || *r.NativeStatus == "" {
			return nil, fmt.Errorf("%s: entry %d: native_status must be a non-empty string", name, i)
		}
		if _, dup := hints.Lookup(*r.NativeStatus); dup {
			return nil, fmt.Errorf("%s: native_status %q appears twice", name, *r.NativeStatus)
		}
		if r.MapsTo == nil {
			return nil, fmt.Errorf("%s: entry %d (%q): maps_to is missing", name, i, *r.NativeStatus)
		}
		st, err := model.ParseStatus("maps_to", *r.MapsTo)
		if err != nil {
			return nil, fmt.Errorf("%s: entry %d (%q): %v", name, i, *r.NativeStatus, err)
		}
		if r.DispatchLabel != nil && *r.DispatchLabel == "" {
			r.DispatchLabel = nil
		}
		hints = append(hints, model.DispatchHint{NativeStatus: *r.NativeStatus, MapsTo: st, DispatchLabel: r.DispatchLabel, Description: r.Description})
	}
	return hints, nil
}

// Millis reads a duration given in milliseconds, within [lo, hi].
func Millis(getenv func(string) string, name string, def time.Duration, lo, hi int) (time.Duration, error) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return def, fmt.Errorf("%s: invalid value %q: want an integer number of milliseconds from %d to %d", name, v, lo, hi)
	}
	return time.Duration(n) * time.Millisecond, nil
}
