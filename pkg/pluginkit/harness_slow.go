package pluginkit

import (
	"context"
	"time"
)

// HarnessEnv names the environment variable that lets a conformance
// harness opt a production binary into its busy scenarios (ping while
// busy, cancel, drain; spec §8.6.1). With the value "slow" the plugin
// serves harness/slow {ms} and advertises "$harness/slow".
//
// It is deliberately not declared in env_required: the daemon clears the
// environment and forwards only declared names (host-and-lifecycle §5),
// so a plugin the daemon starts never serves harness/slow. Only a harness
// that sets the variable itself sees it.
const HarnessEnv = "ANIMUS_PLUGIN_HARNESS"

// harnessSlowCapability is the opt-in string advertised with harness/slow.
const harnessSlowCapability = "$harness/slow"

// harnessSlowMethod is the method the busy scenarios call.
const harnessSlowMethod = "harness/slow"

// harnessSlowLimit bounds one harness/slow call, so a harness bug cannot
// keep a worker for ever.
const harnessSlowLimit = 60 * time.Second

// enableHarness registers harness/slow when value asks for it. A plugin
// that serves its own harness/slow (the example plugin) keeps it.
func (p *Plugin) enableHarness(value string) {
	if value != "slow" {
		return
	}
	if p.Mux == nil {
		p.Mux = NewMux()
	}
	if p.Mux.lookup(harnessSlowMethod) == nil {
		Handle(p.Mux, harnessSlowMethod, harnessSlow)
	}
	p.ExtraCapabilities = append(append([]string(nil), p.ExtraCapabilities...), harnessSlowCapability)
}

// harnessSlowParams is harness/slow's input.
type harnessSlowParams struct {
	MS int `json:"ms"`
}

// Validate keeps the sleep within harnessSlowLimit.
func (h harnessSlowParams) Validate() error {
	if h.MS < 0 || time.Duration(h.MS)*time.Millisecond > harnessSlowLimit {
		return InvalidParams("invalid params: field \"ms\" must be between 0 and %d", harnessSlowLimit.Milliseconds())
	}
	return nil
}

// harnessSlow sleeps for ms milliseconds like a slow domain call would,
// and stops early when the host cancels it (-32002) or the plugin drains.
func harnessSlow(ctx context.Context, h harnessSlowParams) (map[string]int, error) {
	t := time.NewTimer(time.Duration(h.MS) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return map[string]int{"slept_ms": h.MS}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
