package queue

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// The settings every queue backend reads, under the same names, so an
// operator moving a queue from SQLite to PostgreSQL keeps them.
const (
	EnvLeaseTTLSecs   = "ANIMUS_QUEUE_LEASE_TTL_SECS"
	EnvAuditRetention = "ANIMUS_QUEUE_AUDIT_RETENTION_DAYS"
)

// Defaults of the shared settings.
const (
	DefaultAuditRetention = 30 * 24 * time.Hour
	// DefaultTicketTTL and MaxTicketTTL bound a generation-fenced lease
	// (queue-v2.md §6.18).
	DefaultTicketTTL = 1800 * time.Second
	MaxTicketTTL     = 604800 * time.Second
)

// RulesEnv is the part of a queue plugin's env_required that Rules read.
var RulesEnv = []pluginkit.EnvVar{
	{Name: EnvLeaseTTLSecs, Description: "lease length in seconds, 1-604800, default 1800 for queue/v2 leases; for old-style queue/lease it is opt-in (unset or 0 = off): old-style entries assigned longer ago than this are leased again unless excluded"},
	{Name: EnvAuditRetention, Description: "days the audit trail of finished entries is kept (default 30, 0 = forever)"},
}

// Rules are the queue settings that shape the semantics, whatever the
// backend.
type Rules struct {
	LeaseTTL       time.Duration // old-style queue/lease reclaim age; 0 = off
	TicketTTL      time.Duration // queue/v2 lease length; 0 means DefaultTicketTTL
	AuditRetention time.Duration // 0 = keep forever
}

// RulesFromEnv reads the shared settings through getenv (os.Getenv in
// production). A malformed retention is an error: a typo must not
// silently become a default.
func RulesFromEnv(getenv func(string) string) (Rules, error) {
	r := Rules{AuditRetention: DefaultAuditRetention}
	// The lease TTL is read the way the reference queue reads it
	// (queue-v2.md §3.6, §6.18): anything that is not a whole number in
	// range falls back (1800 s for v2 tickets, off for old-style leases)
	// instead of stopping the plugin, so a 0.7 daemon always gets a queue.
	if v, ok, err := Setting(getenv, EnvLeaseTTLSecs); err == nil && ok {
		r.LeaseTTL = time.Duration(v) * time.Second
	}
	r.TicketTTL = ticketTTL(r.LeaseTTL)
	if v, ok, err := Setting(getenv, EnvAuditRetention); err != nil {
		return r, err
	} else if ok {
		r.AuditRetention = time.Duration(v) * 24 * time.Hour
	}
	return r, nil
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

// Ticket is the v2 lease length of r (the default for zero Rules).
func (r Rules) Ticket() time.Duration { return ticketTTL(r.TicketTTL) }

// maxSetting keeps every duration setting far from time.Duration overflow
// (about 292 years) whatever the unit.
const maxSetting = 1 << 31

// Setting reads a whole-number setting from 0 to 2^31: ok is false when
// it is unset or blank.
func Setting(getenv func(string) string, name string) (v int64, ok bool, err error) {
	s := strings.TrimSpace(getenv(name))
	if s == "" {
		return 0, false, nil
	}
	v, err = strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 || v > maxSetting {
		return 0, false, fmt.Errorf("%s=%q: want a whole number from 0 to %d", name, s, int64(maxSetting))
	}
	return v, true, nil
}
