package pgkit

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// Settings are how a plugin reaches its namespace, read from the
// environment under one prefix (ANIMUS_QUEUE_PG, ANIMUS_DURABLE_PG, …),
// so every PostgreSQL plugin is configured the same way.
type Settings struct {
	DSN            string
	Schema         string
	ConnectTimeout time.Duration
	LockTimeout    time.Duration // how long a writer waits for the namespace
}

// EnvDatabaseURL is the conventional fallback for the DSN.
const EnvDatabaseURL = "DATABASE_URL"

// SettingNames are the variables of prefix: DSN, schema, connect timeout,
// lock timeout.
func SettingNames(prefix string) (dsn, schema, connectMS, lockMS string) {
	return prefix + "_DSN", prefix + "_SCHEMA", prefix + "_CONNECT_TIMEOUT_MS", prefix + "_LOCK_TIMEOUT_MS"
}

// SettingsEnv is the part of a plugin's env_required that LoadSettings
// reads; what names the data ("queue", "step log") and defaults holds the
// schema and timeouts used when a variable is unset.
func SettingsEnv(prefix, what string, defaults Settings) []pluginkit.EnvVar {
	dsn, schema, connect, lock := SettingNames(prefix)
	return []pluginkit.EnvVar{
		{Name: dsn, Sensitive: true, Description: "PostgreSQL connection string (URL or key=value); every daemon that shares the " + what + " points at the same database and " + schema},
		{Name: EnvDatabaseURL, Sensitive: true, Description: "used when " + dsn + " is unset"},
		{Name: schema, Description: fmt.Sprintf("PostgreSQL schema (namespace) that holds this %s, so several share one database (default %s)", what, defaults.Schema)},
		{Name: connect, Description: fmt.Sprintf("how long a call waits to reach PostgreSQL before it fails as unavailable (default %d)", defaults.ConnectTimeout.Milliseconds())},
		{Name: lock, Description: fmt.Sprintf("how long a call waits for another writer of the %s before it fails as busy (default %d)", what, defaults.LockTimeout.Milliseconds())},
	}
}

// LoadSettings reads prefix's variables through getenv (os.Getenv in
// production) over defaults. A malformed value is an error naming the
// variable (never its value when it is the DSN): a typo must not silently
// become a default, least of all the namespace, which would quietly point
// a daemon at other data. A missing DSN is ErrNoDSN (with the settings
// read so far).
func LoadSettings(getenv func(string) string, prefix string, defaults Settings) (Settings, error) {
	dsnVar, schemaVar, connectVar, lockVar := SettingNames(prefix)
	s := defaults
	s.DSN = strings.TrimSpace(getenv(dsnVar))
	if s.DSN == "" {
		s.DSN = strings.TrimSpace(getenv(EnvDatabaseURL))
	}
	if v := strings.TrimSpace(getenv(schemaVar)); v != "" {
		s.Schema = v
	}
	if err := ValidSchema(s.Schema); err != nil {
		return s, fmt.Errorf("%s: %w", schemaVar, err)
	}
	for _, ms := range []struct {
		name string
		into *time.Duration
	}{{connectVar, &s.ConnectTimeout}, {lockVar, &s.LockTimeout}} {
		v := strings.TrimSpace(getenv(ms.name))
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > 1<<31 {
			return s, fmt.Errorf("%s=%q: want a whole number of milliseconds from 1 to %d", ms.name, v, int64(1<<31))
		}
		*ms.into = time.Duration(n) * time.Millisecond
	}
	if s.DSN == "" {
		return s, fmt.Errorf("%w: set %s (or %s)", ErrNoDSN, dsnVar, EnvDatabaseURL)
	}
	return s, nil
}

// ErrNoDSN means neither DSN variable is set.
var ErrNoDSN = errors.New("no PostgreSQL connection string")

// Open returns the handle of the database these settings name, for the
// binary appName (PostgreSQL's application_name). It does not dial: the
// first query does, bounded by ConnectTimeout.
func (s Settings) Open(appName string) (*DB, error) {
	return Open(Options{DSN: s.DSN, Schema: s.Schema, ConnectTimeout: s.ConnectTimeout, AppName: appName})
}

// Check is a PostgreSQL plugin's Preflight: the settings loaded (loadErr
// is LoadSettings's error) and the DSN is one the driver accepts (parsed
// only, nothing dialled).
func (s Settings) Check(appName string, loadErr error) error {
	if loadErr != nil {
		return loadErr
	}
	db, err := s.Open(appName)
	if err != nil {
		return err
	}
	db.Close()
	return nil
}
