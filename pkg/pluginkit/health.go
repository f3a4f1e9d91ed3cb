package pluginkit

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strconv"
	"time"
)

// HealthStatus is health/check's status (snake_case on the wire).
type HealthStatus string

// The three health states.
const (
	Healthy   HealthStatus = "healthy"
	Degraded  HealthStatus = "degraded"
	Unhealthy HealthStatus = "unhealthy"
)

// HealthReport is what a plugin's Health hook returns. LastError, when set,
// is reported instead of the last internal error pluginkit recorded.
type HealthReport struct {
	Status    HealthStatus
	LastError string
}

type healthResult struct {
	Status           HealthStatus `json:"status"`
	UptimeMS         uint64       `json:"uptime_ms"`
	MemoryUsageBytes *uint64      `json:"memory_usage_bytes,omitempty"`
	LastError        string       `json:"last_error,omitempty"`
}

// healthCheck answers health/check on its own goroutine, so it never waits
// behind busy handlers. The plugin's hook gets healthBudget.
func (s *server) healthCheck(id json.RawMessage) {
	report := HealthReport{Status: Healthy}
	if s.p.Health != nil {
		ctx, cancel := context.WithTimeout(s.handlerContext(s.life, id), healthBudget)
		report = s.p.Health(ctx)
		cancel()
		if report.Status == "" {
			report.Status = Healthy
		}
	}
	res := healthResult{
		Status:   report.Status,
		UptimeMS: uint64(time.Since(s.started).Milliseconds()),
	}
	if rss, ok := residentBytes(); ok {
		res.MemoryUsageBytes = &rss
	}
	if report.LastError != "" {
		res.LastError = s.redact.summary(report.LastError)
	} else {
		s.readInFlight(func(st *inFlightState) { res.LastError = st.lastError })
	}
	s.reply(id, res)
}

// residentBytes reads the process's resident set size from
// /proc/self/statm (the second field, in pages).
func residentBytes() (uint64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	fields := bytes.Fields(b)
	if len(fields) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseUint(string(fields[1]), 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * uint64(os.Getpagesize()), true
}
