package config

import (
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/queue"
)

// Prefix names the PostgreSQL settings: ANIMUS_QUEUE_PG_DSN,
// ANIMUS_QUEUE_PG_SCHEMA, ANIMUS_QUEUE_PG_CONNECT_TIMEOUT_MS,
// ANIMUS_QUEUE_PG_LOCK_TIMEOUT_MS (and DATABASE_URL).
const Prefix = "ANIMUS_QUEUE_PG"

// The variables, by name.
var (
	EnvDSN, EnvSchema, EnvConnectTimeoutMS, EnvLockTimeoutMS = pgkit.SettingNames(Prefix)
	EnvDatabaseURL                                           = pgkit.EnvDatabaseURL
)

// Defaults.
const (
	DefaultSchema         = "animus"
	DefaultConnectTimeout = 5 * time.Second
	DefaultLockTimeout    = 5 * time.Second
)

var defaults = pgkit.Settings{Schema: DefaultSchema, ConnectTimeout: DefaultConnectTimeout, LockTimeout: DefaultLockTimeout}

// Env is the env_required list of the manifest. Neither DSN variable is
// required on its own (one of them is); both are sensitive, so the
// daemon's and our logs never show them.
var Env = append(pgkit.SettingsEnv(Prefix, "queue", defaults), queue.RulesEnv...)

// Config is the parsed environment.
type Config struct {
	pgkit.Settings
	queue.Rules
}

// ErrNoDSN means neither DSN variable is set.
var ErrNoDSN = pgkit.ErrNoDSN

// FromEnv parses the variables through getenv (os.Getenv in production).
// A malformed value is an error naming the variable.
func FromEnv(getenv func(string) string) (Config, error) {
	var c Config
	var err error
	if c.Rules, err = queue.RulesFromEnv(getenv); err != nil {
		return c, err
	}
	c.Settings, err = pgkit.LoadSettings(getenv, Prefix, defaults)
	return c, err
}
