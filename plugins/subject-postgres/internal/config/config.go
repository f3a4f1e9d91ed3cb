// Package config reads animus-subject-postgres's environment: where the
// shared database is (ANIMUS_SUBJECT_PG_DSN or DATABASE_URL, both
// sensitive), which namespace inside it holds the subjects, the timeouts,
// and the rules every subject backend shares (kinds, dispatch hints, the
// watch poll), read under the same prefix.
package config

import (
	"errors"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/subjects"
)

// Prefix names every setting: ANIMUS_SUBJECT_PG_DSN, _SCHEMA,
// _CONNECT_TIMEOUT_MS, _LOCK_TIMEOUT_MS, _KINDS, _DISPATCH_HINTS,
// _WATCH_POLL_MS (and DATABASE_URL).
const Prefix = "ANIMUS_SUBJECT_PG"

// The variables, by name.
var (
	EnvDSN, EnvSchema, EnvConnectTimeoutMS, EnvLockTimeoutMS = pgkit.SettingNames(Prefix)
	EnvDatabaseURL                                           = pgkit.EnvDatabaseURL
	EnvKinds, EnvDispatchHints, EnvWatchPollMS               = subjects.RuleNames(Prefix)
)

// Defaults. The lock timeout is animus-subject-sqlite's busy timeout.
const (
	DefaultSchema         = "animus"
	DefaultConnectTimeout = 5 * time.Second
	DefaultLockTimeout    = 5 * time.Second
)

var defaults = pgkit.Settings{Schema: DefaultSchema, ConnectTimeout: DefaultConnectTimeout, LockTimeout: DefaultLockTimeout}

// Env is the manifest's env_required. Neither DSN variable is required on
// its own (one of them is); both are sensitive.
var Env = append(pgkit.SettingsEnv(Prefix, "subject list", defaults),
	subjects.RulesEnv(Prefix, "changes whose NOTIFY was missed (a dropped LISTEN connection)")...)

// Config is the parsed environment.
type Config struct {
	pgkit.Settings
	subjects.Rules
}

// Load reads the configuration through getenv. On error the Config still
// holds usable rules (best effort), so --manifest and the capabilities
// work; serving must not start.
func Load(getenv func(string) string) (Config, error) {
	rules, rulesErr := subjects.LoadRules(getenv, Prefix)
	settings, err := pgkit.LoadSettings(getenv, Prefix, defaults)
	return Config{Settings: settings, Rules: rules}, errors.Join(rulesErr, err)
}
