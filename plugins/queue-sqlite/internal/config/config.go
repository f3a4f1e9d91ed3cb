package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/queue"
)

// Environment variables of the SQLite backend (the shared ones are in
// package queue).
const (
	EnvDBPath        = "ANIMUS_QUEUE_DB_PATH"
	EnvBusyTimeoutMS = "ANIMUS_QUEUE_BUSY_TIMEOUT_MS"
)

// Defaults.
const (
	DefaultRelPath     = ".animus/queue.sqlite"
	DefaultBusyTimeout = 5 * time.Second
)

// Env is the env_required list of the manifest.
var Env = append([]pluginkit.EnvVar{
	{Name: EnvDBPath, Description: "queue database file; relative paths are resolved against the bound project root (default <project_root>/" + DefaultRelPath + ")"},
	{Name: EnvBusyTimeoutMS, Description: "how long a call waits for another process's write lock before answering -32205 (default 5000)"},
}, queue.RulesEnv...)

// Config is the parsed environment.
type Config struct {
	DBPath      string        // as given; may be relative or empty
	BusyTimeout time.Duration // > 0
	queue.Rules
}

// FromEnv parses the variables through getenv (os.Getenv in production).
// A malformed value is an error: a typo must not silently become a default.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		DBPath:      strings.TrimSpace(getenv(EnvDBPath)),
		BusyTimeout: DefaultBusyTimeout,
	}
	if v, ok, err := queue.Setting(getenv, EnvBusyTimeoutMS); err != nil {
		return c, err
	} else if ok {
		if v == 0 {
			return c, fmt.Errorf("%s must be at least 1", EnvBusyTimeoutMS)
		}
		c.BusyTimeout = time.Duration(v) * time.Millisecond
	}
	var err error
	c.Rules, err = queue.RulesFromEnv(getenv)
	return c, err
}

// ResolveDB is the database file for a project root: the configured path
// (relative ones resolved against the root) or the default under .animus,
// by the one rule every plugin shares.
func (c Config) ResolveDB(projectRoot string) string {
	return pluginkit.ProjectPath(projectRoot, c.DBPath, DefaultRelPath)
}
