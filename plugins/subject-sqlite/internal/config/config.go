package config

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
	"github.com/animus-plugins/animus-plugins/plugins/subject-sqlite/internal/model"
)

// The environment variables, all optional.
const (
	EnvDBPath        = "ANIMUS_SQLITE_DB_PATH"
	EnvKinds         = "ANIMUS_SQLITE_KINDS"
	EnvAutoMigrate   = "ANIMUS_SQLITE_AUTO_MIGRATE"
	EnvDispatchHints = "ANIMUS_SQLITE_DISPATCH_HINTS"
	EnvWatchPollMS   = "ANIMUS_SQLITE_WATCH_POLL_MS"
	EnvBusyTimeoutMS = "ANIMUS_SQLITE_BUSY_TIMEOUT_MS"
)

// Defaults.
const (
	DefaultDBPath      = ".animus/subjects/sqlite.db"
	DefaultKind        = "task"
	DefaultWatchPoll   = 250 * time.Millisecond
	DefaultBusyTimeout = 5 * time.Second
)

// Env is the manifest's env_required list.
var Env = []pluginkit.EnvVar{
	{Name: EnvDBPath, Description: "SQLite database file, relative to the project root (default " + DefaultDBPath + "); parent directories are created"},
	{Name: EnvKinds, Description: "comma-separated subject kinds served (default task); sets the subject_kind: markers and <kind>/ methods"},
	{Name: EnvAutoMigrate, Description: "apply schema migrations at startup: true (default) or false"},
	{Name: EnvDispatchHints, Description: `JSON list of StatusDispatchHint {native_status, maps_to, dispatch_label?, description?}`},
	{Name: EnvWatchPollMS, Description: "how often watches poll for other processes' writes, in ms (default 250)"},
	{Name: EnvBusyTimeoutMS, Description: "how long a write waits for another process's lock, in ms (default 5000)"},
}

// Config is the plugin's configuration.
type Config struct {
	DBPath      string
	Kinds       []string
	AutoMigrate bool
	Hints       model.Hints
	WatchPoll   time.Duration
	BusyTimeout time.Duration
}

// Load reads the configuration. On error it still returns a usable
// best-effort Config (invalid values replaced by defaults, invalid kinds
// dropped), so --manifest can describe the plugin; serving must not start.
func Load(getenv func(string) string) (Config, error) {
	c := Config{DBPath: DefaultDBPath, Kinds: []string{DefaultKind}, AutoMigrate: true,
		WatchPoll: DefaultWatchPoll, BusyTimeout: DefaultBusyTimeout}
	var errs []error
	if v := strings.TrimSpace(getenv(EnvDBPath)); v != "" {
		c.DBPath = v
	}
	if v := getenv(EnvKinds); strings.TrimSpace(v) != "" {
		kinds, err := parseKinds(v)
		if len(kinds) > 0 {
			c.Kinds = kinds
		}
		errs = append(errs, err)
	}
	if v := strings.TrimSpace(getenv(EnvAutoMigrate)); v != "" {
		b, err := parseBool(v)
		c.AutoMigrate = b || err != nil
		errs = append(errs, err)
	}
	if v := strings.TrimSpace(getenv(EnvDispatchHints)); v != "" {
		hints, err := parseHints(v)
		if err == nil {
			c.Hints = hints
		}
		errs = append(errs, err)
	}
	var err error
	if c.WatchPoll, err = millis(getenv, EnvWatchPollMS, DefaultWatchPoll, 10, 60_000); err != nil {
		errs = append(errs, err)
	}
	if c.BusyTimeout, err = millis(getenv, EnvBusyTimeoutMS, DefaultBusyTimeout, 1, 600_000); err != nil {
		errs = append(errs, err)
	}
	return c, errors.Join(errs...)
}

// parseKinds splits, trims and validates kinds (subject.md §7 A14). Valid
// kinds are returned even when others are rejected.
func parseKinds(v string) ([]string, error) {
	var kinds []string
	var errs []error
	for _, k := range strings.Split(v, ",") {
		k = strings.TrimSpace(k)
		switch {
		case k == "":
			continue
		case k == "subject":
			errs = append(errs, fmt.Errorf("%s: kind %q is reserved for the subject/ methods", EnvKinds, k))
		case strings.HasPrefix(k, "$"), strings.ContainsAny(k, "/:*"), strings.IndexFunc(k, unicode.IsSpace) >= 0:
			errs = append(errs, fmt.Errorf("%s: invalid kind %q: a kind must not start with $ or contain '/', ':', '*' or spaces", EnvKinds, k))
		case slices.Contains(kinds, k):
			errs = append(errs, fmt.Errorf("%s: kind %q is listed twice", EnvKinds, k))
		default:
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%s: no kind given (want e.g. %q)", EnvKinds, "task,issue"))
	}
	return kinds, errors.Join(errs...)
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%s: invalid value %q: want true or false (also 1/0, yes/no, on/off)", EnvAutoMigrate, v)
}

func parseHints(v string) (model.Hints, error) {
	var raw []struct {
		NativeStatus  *string `json:"native_status"`
		MapsTo        *string `json:"maps_to"`
		DispatchLabel *string `json:"dispatch_label"`
		Description   *string `json:"description"`
	}
	if err := json.Unmarshal([]byte(v), &raw); err != nil {
		return nil, fmt.Errorf("%s: not a JSON list of {native_status, maps_to, dispatch_label?, description?}: %v", EnvDispatchHints, err)
	}
	hints := make(model.Hints, 0, len(raw))
	for i, r := range raw {
		if r.NativeStatus == nil || *r.NativeStatus == "" {
			return nil, fmt.Errorf("%s: entry %d: native_status must be a non-empty string", EnvDispatchHints, i)
		}
		if _, dup := hints.Lookup(*r.NativeStatus); dup {
			return nil, fmt.Errorf("%s: native_status %q appears twice", EnvDispatchHints, *r.NativeStatus)
		}
		if r.MapsTo == nil {
			return nil, fmt.Errorf("%s: entry %d (%q): maps_to is missing", EnvDispatchHints, i, *r.NativeStatus)
		}
		st, err := model.ParseStatus("maps_to", *r.MapsTo)
		if err != nil {
			return nil, fmt.Errorf("%s: entry %d (%q): %v", EnvDispatchHints, i, *r.NativeStatus, err)
		}
		if r.DispatchLabel != nil && *r.DispatchLabel == "" {
			r.DispatchLabel = nil
		}
		hints = append(hints, model.DispatchHint{NativeStatus: *r.NativeStatus, MapsTo: st, DispatchLabel: r.DispatchLabel, Description: r.Description})
	}
	return hints, nil
}

func millis(getenv func(string) string, name string, def time.Duration, lo, hi int) (time.Duration, error) {
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
