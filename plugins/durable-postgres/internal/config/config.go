// Package config reads animus-durable-postgres's environment: where the
// shared database is (ANIMUS_DURABLE_PG_DSN or DATABASE_URL, both
// sensitive), which namespace inside it holds the step log, the timeouts,
// and the settings every durable store backend shares (durable.Rules).
package config

import (
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/durable"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
)

// Prefix names the PostgreSQL settings: ANIMUS_DURABLE_PG_DSN,
// ANIMUS_DURABLE_PG_SCHEMA, ANIMUS_DURABLE_PG_CONNECT_TIMEOUT_MS,
// ANIMUS_DURABLE_PG_LOCK_TIMEOUT_MS (and DATABASE_URL).
const Prefix = "ANIMUS_DURABLE_PG"

// The variables, by name.
var (
	EnvDSN, EnvSchema, EnvConnectTimeoutMS, EnvLockTimeoutMS = pgkit.SettingNames(Prefix)
	EnvDatabaseURL                                           = pgkit.EnvDatabaseURL
)

// Defaults. The lock timeout is animus-durable-sqlite's busy timeout: a
// contended write fails (-32304, retryable) well before the caller's 60 s
// RPC timeout.
const (
	DefaultSchema         = "animus"
	DefaultConnectTimeout = 5 * time.Second
	DefaultLockTimeout    = 10 * time.Second
)

var defaults = pgkit.Settings{Schema: DefaultSchema, ConnectTimeout: DefaultConnectTimeout, LockTimeout: DefaultLockTimeout}

// Env is the manifest's env_required. Neither DSN variable is required on
// its own (one of them is); both are sensitive.
var Env = append(pgkit.SettingsEnv(Prefix, "step log", defaults), durable.RulesEnv...)

// Config is the parsed environment.
type Config struct {
	pgkit.Settings
	durable.Rules
}

// Load reads the configuration through getenv. A malformed value is an
// error naming the variable; the Config then still holds usable rules
// (the defaults), so --manifest and the capabilities work.
func Load(getenv func(string) string) (Config, error) {
	c := Config{Settings: defaults, Rules: durable.DefaultRules()}
	rules, err := durable.LoadRules(getenv)
	if err != nil {
		return c, err
	}
	c.Rules = rules
	c.Settings, err = pgkit.LoadSettings(getenv, Prefix, defaults)
	return c, err
}
