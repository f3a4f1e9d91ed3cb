package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// Environment variables.
const (
	EnvDBPath         = "ANIMUS_QUEUE_DB_PATH"
	EnvBusyTimeoutMS  = "ANIMUS_QUEUE_BUSY_TIMEOUT_MS"
	EnvLeaseTTLSecs   = "ANIMUS_QUEUE_LEASE_TTL_SECS"
	EnvAuditRetention = "ANIMUS_QUEUE_AUDIT_RETENTION_DAYS"
)

// Defaults.
const (
	DefaultRelPath        = ".animus/queue.sqlite"
	DefaultBusyTimeout    = 5 * time.Second
	DefaultAuditRetention = 30 * 24 * time.Hour
	// DefaultTicketTTL and MaxTicketTTL bound a generation-fenced lease
	// (queue-v2.md §6.18).
	DefaultTicketTTL = 1800 * time.Second
	MaxTicketTTL     = 604800 * time.Second
)

// Env is the env_required list of the manifest.
var Env = []pluginkit.EnvVar{
	{Name: EnvDBPath, Description: "queue database file; relative paths are resolved against the bound project root (default <project_root>/" + DefaultRelPath + ")"},
	{Name: EnvBusyTimeoutMS, Description: "how long a call waits for another process's write lock before answering -32205 (default 5000)"},
	{Name: EnvLeaseTTLSecs, Description: "lease length in seconds, 1-604800, default 1800 for queue/v2 leases; for old-style queue/lease it is opt-in (unset or 0 = off): old-style entries assigned longer ago than this are leased again unless excluded"},
	{Name: EnvAuditRetention, Description: "days the audit trail of finished entries is kept (default 30, 0 = forever)"},
}

// Config is the parsed environment.
type Config struct {
	DBPath         string        // as given; may be relative or empty
	BusyTimeout    time.Duration // > 0
	LeaseTTL       time.Duration // old-style queue/lease reclaim age; 0 = off
	TicketTTL      time.Duration // queue/v2 lease length; 0 means DefaultTicketTTL
	AuditRetention time.Duration // 0 = keep forever
}

// FromEnv parses the variables through getenv (os.Getenv in production).
// A malformed value is an error: a typo must not silently become a default.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		DBPath:         strings.TrimSpace(getenv(EnvDBPath)),
		BusyTimeout:    DefaultBusyTimeout,
		AuditRetention: DefaultAuditRetention,
	}
	if v, ok, err := nonNegative(getenv, EnvBusyTimeoutMS); err != nil {
		return c, err
	} else if ok {
		if v == 0 {
			return c, fmt.Errorf("%s must be at least 1", EnvBusyTimeoutMS)
		}
		c.BusyTimeout = time.Duration(v) * time.Millisecond
	}
	// The lease TTL is read the way the reference queue reads it
	// (queue-v2.md §3.6, §6.18): anything that is not a whole number in
	// range falls back (1800 s for v2 tickets, off for old-style leases)
	// instead of stopping the plugin, so a 0.7 daemon always gets a queue.
	if v, ok, err := nonNegative(getenv, EnvLeaseTTLSecs); err == nil && ok {
		c.LeaseTTL = time.Duration(v) * time.Second
	}
	c.TicketTTL = ticketTTL(c.LeaseTTL)
	if v, ok, err := nonNegative(getenv, EnvAuditRetention); err != nil {
		return c, err
	} else if ok {
		c.AuditRetention = time.Duration(v) * 24 * time.Hour
	}
	return c, nil
}

// ticketTTL is the v2 lease length for a setting: the setting when it is
// within 1..=604800 seconds, else the default (§3.6: 0 and too large fall
// back to 1800).
func ticketTTL(setting time.Duration) time.Duration {
	if setting <= 0 || setting > MaxTicketTTL {
		return DefaultTicketTTL
	}
	return setting
}

// Ticket is the v2 lease length of c (the default for a zero Config).
func (c Config) Ticket() time.Duration { return ticketTTL(c.TicketTTL) }

// maxSetting keeps every duration setting far from time.Duration overflow
// (about 292 years) whatever the unit.
const maxSetting = 1 << 31

func nonNegative(getenv func(string) string, name string) (int64, bool, error) {
	s := strings.TrimSpace(getenv(name))
	if s == "" {
		return 0, false, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 || v > maxSetting {
		return 0, false, fmt.Errorf("%s=%q: want a whole number from 0 to %d", name, s, int64(maxSetting))
	}
	return v, true, nil
}

// ResolveDB is the database file for a project root: the configured path
// (relative ones resolved against the root) or the default under .animus,
// by the one rule every plugin shares.
func (c Config) ResolveDB(projectRoot string) string {
	return pluginkit.ProjectPath(projectRoot, c.DBPath, DefaultRelPath)
}
