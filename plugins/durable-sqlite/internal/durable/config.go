package durable

import (
	"fmt"
	"strconv"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// Environment variables the plugin reads. Animus forwards only names
// declared in env_required, so every one is listed in Env.
const (
	EnvDBPath          = "ANIMUS_DURABLE_DB_PATH"
	EnvReservationTTL  = "ANIMUS_DURABLE_RESERVATION_TTL_SECS"
	EnvMaxPayloadBytes = "ANIMUS_DURABLE_MAX_PAYLOAD_BYTES"
	EnvBusyTimeoutMS   = "ANIMUS_DURABLE_BUSY_TIMEOUT_MS"
)

// Env is the manifest's env_required. None is secret or required.
var Env = []pluginkit.EnvVar{
	{Name: EnvDBPath, Description: "SQLite file (default <project_root>/.animus/durable.sqlite; a relative path is taken from the project root)"},
	{Name: EnvReservationTTL, Description: "reservation TTL in seconds when begin_step gives none (default 300, 1..86400)"},
	{Name: EnvMaxPayloadBytes, Description: "largest output, error, payload or inputs in bytes (default 1048576, 1024..4194304)"},
	{Name: EnvBusyTimeoutMS, Description: "how long a write waits for another process's write, in ms (default 10000, 100..55000)"},
}

// Limits and defaults.
const (
	DefaultReservationTTL = 300 * time.Second
	// MaxReservationTTL caps a caller's reservation_ttl_secs: a holder that
	// died blocks its key until the TTL runs out, so no TTL is unbounded.
	MaxReservationTTL      = 24 * time.Hour
	DefaultMaxPayloadBytes = 1 << 20
	// maxPayloadCeiling keeps a reply that carries one stored value (a
	// begin_step prior_output) well inside the 8 MiB the daemon's reader
	// accepts for one frame.
	maxPayloadCeiling  = 4 << 20
	DefaultBusyTimeout = 10 * time.Second
	// maxBusyTimeout stays under the caller's 60 s RPC timeout, so a
	// contended write fails with -32304 before the caller gives up on it.
	maxBusyTimeout = 55 * time.Second
)

// Config is the plugin's configuration, read once at start.
type Config struct {
	DBPath          string // override; "" means <project_root>/.animus/durable.sqlite
	ReservationTTL  time.Duration
	MaxPayloadBytes int
	BusyTimeout     time.Duration
}

// LoadConfig reads the configuration through getenv. An unset or empty
// variable takes its default; a malformed or out-of-range value is an error
// naming the variable, so a typo fails at start instead of changing
// behaviour silently.
func LoadConfig(getenv func(string) string) (Config, error) {
	c := Config{DBPath: getenv(EnvDBPath)}
	ttl, err := intVar(getenv, EnvReservationTTL, int(DefaultReservationTTL/time.Second), 1, int(MaxReservationTTL/time.Second))
	if err != nil {
		return Config{}, err
	}
	c.ReservationTTL = time.Duration(ttl) * time.Second
	if c.MaxPayloadBytes, err = intVar(getenv, EnvMaxPayloadBytes, DefaultMaxPayloadBytes, 1024, maxPayloadCeiling); err != nil {
		return Config{}, err
	}
	ms, err := intVar(getenv, EnvBusyTimeoutMS, int(DefaultBusyTimeout/time.Millisecond), 100, int(maxBusyTimeout/time.Millisecond))
	if err != nil {
		return Config{}, err
	}
	c.BusyTimeout = time.Duration(ms) * time.Millisecond
	return c, nil
}

func intVar(getenv func(string) string, name string, def, lo, hi int) (int, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s=%q: want an integer from %d to %d", name, v, lo, hi)
	}
	return n, nil
}
