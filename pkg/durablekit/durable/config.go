package durable

import (
	"fmt"
	"strconv"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// The settings every durable store backend reads, under the same names.
const (
	EnvReservationTTL  = "ANIMUS_DURABLE_RESERVATION_TTL_SECS"
	EnvMaxPayloadBytes = "ANIMUS_DURABLE_MAX_PAYLOAD_BYTES"
)

// RulesEnv is the part of a durable store plugin's env_required that
// Rules read. None is secret or required.
var RulesEnv = []pluginkit.EnvVar{
	{Name: EnvReservationTTL, Description: "reservation TTL in seconds when begin_step gives none (default 300, 1..86400)"},
	{Name: EnvMaxPayloadBytes, Description: "largest output, error, payload or inputs in bytes (default 1048576, 1024..4194304)"},
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
	maxPayloadCeiling = 4 << 20
)

// Rules are the settings that shape the step log's answers, whatever the
// backend.
type Rules struct {
	ReservationTTL  time.Duration
	MaxPayloadBytes int
}

// LoadRules reads the shared settings through getenv. An unset or empty
// variable takes its default; a malformed or out-of-range value is an
// error naming the variable, so a typo fails at start instead of changing
// behaviour silently.
func LoadRules(getenv func(string) string) (Rules, error) {
	var r Rules
	ttl, err := IntSetting(getenv, EnvReservationTTL, int(DefaultReservationTTL/time.Second), 1, int(MaxReservationTTL/time.Second))
	if err != nil {
		return Rules{}, err
	}
	r.ReservationTTL = time.Duration(ttl) * time.Second
	if r.MaxPayloadBytes, err = IntSetting(getenv, EnvMaxPayloadBytes, DefaultMaxPayloadBytes, 1024, maxPayloadCeiling); err != nil {
		return Rules{}, err
	}
	return r, nil
}

// DefaultRules are the rules of an empty environment.
func DefaultRules() Rules {
	r, _ := LoadRules(func(string) string { return "" })
	return r
}

// IntSetting reads an integer setting from lo to hi (def when unset).
func IntSetting(getenv func(string) string, name string, def, lo, hi int) (int, error) {
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
