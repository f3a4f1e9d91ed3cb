package config

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/queue"
)

// Environment variables of the PostgreSQL backend (the shared ones are in
// package queue).
const (
	EnvDSN              = "ANIMUS_QUEUE_PG_DSN"
	EnvDatabaseURL      = "DATABASE_URL"
	EnvSchema           = "ANIMUS_QUEUE_PG_SCHEMA"
	EnvConnectTimeoutMS = "ANIMUS_QUEUE_PG_CONNECT_TIMEOUT_MS"
	EnvLockTimeoutMS    = "ANIMUS_QUEUE_PG_LOCK_TIMEOUT_MS"
)

// Defaults.
const (
	DefaultSchema         = "animus"
	DefaultConnectTimeout = 5 * time.Second
	DefaultLockTimeout    = 5 * time.Second
)

// Env is the env_required list of the manifest. Neither DSN variable is
// required on its own (one of them is); both are sensitive, so the
// daemon's and our logs never show them.
var Env = append([]pluginkit.EnvVar{
	{Name: EnvDSN, Sensitive: true, Description: "PostgreSQL connection string (URL or key=value); every daemon that shares the queue points at the same database and " + EnvSchema},
	{Name: EnvDatabaseURL, Sensitive: true, Description: "used when " + EnvDSN + " is unset"},
	{Name: EnvSchema, Description: "PostgreSQL schema (namespace) that holds this queue, so several queues share one database (default " + DefaultSchema + ")"},
	{Name: EnvConnectTimeoutMS, Description: "how long a call waits to reach PostgreSQL before answering -32205 (default 5000)"},
	{Name: EnvLockTimeoutMS, Description: "how long a call waits for another writer of the queue before answering -32205 (default 5000)"},
}, queue.RulesEnv...)

// Config is the parsed environment.
type Config struct {
	DSN            string
	Schema         string
	ConnectTimeout time.Duration
	LockTimeout    time.Duration
	queue.Rules
}

// ErrNoDSN means neither DSN variable is set.
var ErrNoDSN = errors.New(EnvDSN + " (or " + EnvDatabaseURL + ") must name the PostgreSQL database that holds the queue")

// FromEnv parses the variables through getenv (os.Getenv in production).
// A malformed value is an error: a typo must not silently become a
// default, least of all the namespace, which would quietly point a
// daemon at another queue.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		DSN:            strings.TrimSpace(getenv(EnvDSN)),
		Schema:         strings.TrimSpace(getenv(EnvSchema)),
		ConnectTimeout: DefaultConnectTimeout,
		LockTimeout:    DefaultLockTimeout,
	}
	if c.DSN == "" {
		c.DSN = strings.TrimSpace(getenv(EnvDatabaseURL))
	}
	if c.Schema == "" {
		c.Schema = DefaultSchema
	}
	if err := pgkit.ValidSchema(c.Schema); err != nil {
		return c, fmt.Errorf("%s: %w", EnvSchema, err)
	}
	for _, ms := range []struct {
		name string
		into *time.Duration
	}{{EnvConnectTimeoutMS, &c.ConnectTimeout}, {EnvLockTimeoutMS, &c.LockTimeout}} {
		v, ok, err := queue.Setting(getenv, ms.name)
		if err != nil {
			return c, err
		}
		if ok {
			if v == 0 {
				return c, fmt.Errorf("%s must be at least 1", ms.name)
			}
			*ms.into = time.Duration(v) * time.Millisecond
		}
	}
	var err error
	if c.Rules, err = queue.RulesFromEnv(getenv); err != nil {
		return c, err
	}
	if c.DSN == "" {
		return c, ErrNoDSN
	}
	return c, nil
}
