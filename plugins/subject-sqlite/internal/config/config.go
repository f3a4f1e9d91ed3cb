package config

import (
	"errors"
	"fmt"
	"strings"

	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/subjects"
)

// Prefix names the shared subject settings: ANIMUS_SQLITE_KINDS,
// ANIMUS_SQLITE_DISPATCH_HINTS, ANIMUS_SQLITE_WATCH_POLL_MS (the Rust
// plugin's names).
const Prefix = "ANIMUS_SQLITE"

// The environment variables, all optional.
const (
	EnvDBPath        = Prefix + "_DB_PATH"
	EnvAutoMigrate   = Prefix + "_AUTO_MIGRATE"
	EnvBusyTimeoutMS = Prefix + "_BUSY_TIMEOUT_MS"
)

// The shared rule variables, by name.
var EnvKinds, EnvDispatchHints, EnvWatchPollMS = subjects.RuleNames(Prefix)

// Defaults.
const (
	DefaultDBPath      = ".animus/subjects/sqlite.db"
	DefaultKind        = subjects.DefaultKind
	DefaultWatchPoll   = subjects.DefaultWatchPoll
	DefaultBusyTimeout = 5 * time.Second
)

// Env is the manifest's env_required list.
var Env = func() []pluginkit.EnvVar {
	rules := subjects.RulesEnv(Prefix, "other processes' writes")
	return []pluginkit.EnvVar{
		{Name: EnvDBPath, Description: "SQLite database file, relative to the project root (default " + DefaultDBPath + "); parent directories are created"},
		rules[0],
		{Name: EnvAutoMigrate, Description: "apply schema migrations at startup: true (default) or false"},
		rules[1], rules[2],
		{Name: EnvBusyTimeoutMS, Description: "how long a write waits for another process's lock, in ms (default 5000)"},
	}
}()

// Config is the plugin's configuration.
type Config struct {
	subjects.Rules
	DBPath      string
	AutoMigrate bool
	BusyTimeout time.Duration
}

// Load reads the configuration. On error it still returns a usable
// best-effort Config (invalid values replaced by defaults, invalid kinds
// dropped), so --manifest can describe the plugin; serving must not start.
func Load(getenv func(string) string) (Config, error) {
	rules, err := subjects.LoadRules(getenv, Prefix)
	c := Config{Rules: rules, DBPath: DefaultDBPath, AutoMigrate: true, BusyTimeout: DefaultBusyTimeout}
	errs := []error{err}
	if v := strings.TrimSpace(getenv(EnvDBPath)); v != "" {
		c.DBPath = v
	}
	if v := strings.TrimSpace(getenv(EnvAutoMigrate)); v != "" {
		b, err := parseBool(v)
		c.AutoMigrate = b || err != nil
		errs = append(errs, err)
	}
	if c.BusyTimeout, err = subjects.Millis(getenv, EnvBusyTimeoutMS, DefaultBusyTimeout, 1, 600_000); err != nil {
		errs = append(errs, err)
	}
	return c, errors.Join(errs...)
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
