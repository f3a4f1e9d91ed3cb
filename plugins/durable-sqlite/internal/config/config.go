// Package config reads animus-durable-sqlite's environment: where the
// SQLite file is and how long a write waits for another process, plus the
// settings every durable store backend shares (durable.Rules).
package config

import (
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/durable"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// Environment variables of the SQLite backend. Animus forwards only names
// declared in env_required, so every one is listed in Env.
const (
	EnvDBPath        = "ANIMUS_DURABLE_DB_PATH"
	EnvBusyTimeoutMS = "ANIMUS_DURABLE_BUSY_TIMEOUT_MS"
)

// DefaultDBFile is where the store lives inside the bound project.
const DefaultDBFile = ".animus/durable.sqlite"

// Busy timeout bounds.
const (
	DefaultBusyTimeout = 10 * time.Second
	// maxBusyTimeout stays under the caller's 60 s RPC timeout, so a
	// contended write fails with -32304 before the caller gives up on it.
	maxBusyTimeout = 55 * time.Second
)

// Env is the manifest's env_required. None is secret or required.
var Env = []pluginkit.EnvVar{
	{Name: EnvDBPath, Description: "SQLite file (default <project_root>/.animus/durable.sqlite; a relative path is taken from the project root)"},
	durable.RulesEnv[0], durable.RulesEnv[1],
	{Name: EnvBusyTimeoutMS, Description: "how long a write waits for another process's write, in ms (default 10000, 100..55000)"},
}

// Config is the plugin's configuration, read once at start.
type Config struct {
	DBPath      string // override; "" means <project_root>/.animus/durable.sqlite
	BusyTimeout time.Duration
	durable.Rules
}

// Load reads the configuration through getenv. A malformed or
// out-of-range value is an error naming the variable; the returned Config
// then holds the defaults, so --manifest and the capabilities still work.
func Load(getenv func(string) string) (Config, error) {
	c := Config{DBPath: getenv(EnvDBPath), BusyTimeout: DefaultBusyTimeout, Rules: durable.DefaultRules()}
	rules, err := durable.LoadRules(getenv)
	if err != nil {
		return Config{BusyTimeout: DefaultBusyTimeout, Rules: durable.DefaultRules()}, err
	}
	c.Rules = rules
	ms, err := durable.IntSetting(getenv, EnvBusyTimeoutMS, int(DefaultBusyTimeout/time.Millisecond), 100, int(maxBusyTimeout/time.Millisecond))
	if err != nil {
		return Config{BusyTimeout: DefaultBusyTimeout, Rules: durable.DefaultRules()}, err
	}
	c.BusyTimeout = time.Duration(ms) * time.Millisecond
	return c, nil
}

// Path is the database file for a project root.
func (c Config) Path(root string) string { return pluginkit.ProjectPath(root, c.DBPath, DefaultDBFile) }
