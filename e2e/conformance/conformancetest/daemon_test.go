package conformancetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

// TestRunAllSpawnsUnderTheLine: Options.Daemon reaches every process a
// scenario spawns, so a scenario naming a preset sends that line's bytes
// for it (the fakehost table test pins the bytes themselves), the report
// names the line, and the caller's Target keeps its own.
func TestRunAllSpawnsUnderTheLine(t *testing.T) {
	ctx := e2etest.Ctx(t, time.Minute)
	target, err := conformance.Prepare(ctx, binaries.Path(t, "animus-example"), "custom", e2etest.Schemas(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		daemon                   fakehost.Daemon
		generic, queue, notifier string // in the initialize frame each preset sent
	}{
		{fakehost.Daemon{}, `"protocol_version":"1.1.0","host_info":{"name":"animus","version":"0.6.33"}`,
			`"host_info":{"name":"animus","version":"0.6.33"},"init_extensions":{"memory_mcp_stdio_command"`,
			`"host_info":{"name":"animus","version":"0.6.33"},"init_extensions":{"project_binding"`},
		{fakehost.Daemon06, `"protocol_version":"1.0.0","host_info":{"name":"animus","version":"0.1.0"}`,
			`"host_info":{"name":"animus","version":"0.6.33"},"init_extensions":{"memory_mcp_stdio_command"`,
			`"host_info":{"name":"animus","version":"0.6.33"},"init_extensions":{"project_binding"`},
		{fakehost.Daemon07, `"protocol_version":"1.2.0","host_info":{"name":"animus","version":"0.1.0"}`,
			`"host_info":{"name":"animus","version":"0.7.0-rc.52"},"init_extensions":{"memory_mcp_stdio_command"`,
			`"host_info":{"name":"animus","version":"0.7.0-rc.52"},"init_extensions":{"memory_mcp_stdio_command"`},
	}
	for _, c := range cases {
		t.Run(c.daemon.String(), func(t *testing.T) {
			var scenarios []conformance.Scenario
			for _, p := range []struct {
				name   string
				preset fakehost.Preset
				want   string
			}{{"generic", fakehost.PresetDaemon, c.generic}, {"queue", fakehost.PresetQueueClient, c.queue}, {"notifier", fakehost.PresetNotifier, c.notifier}} {
				scenarios = append(scenarios, conformance.Scenario{Suite: "line", Name: p.name,
					Run: func(ctx context.Context, s *conformance.Session) conformance.Outcome {
						h, _, err := s.SpawnReady(ctx, fakehost.Handshake{Preset: p.preset})
						if err != nil {
							return conformance.Outcome{Status: conformance.Fail, Reason: err.Error()}
						}
						if !strings.Contains(h.WireLog(), p.want) {
							return conformance.Outcome{Status: conformance.Fail, Reason: "initialize lacks " + p.want}
						}
						return conformance.Outcome{Status: conformance.Pass}
					}})
			}
			rep := conformance.RunAll(ctx, target, scenarios, conformance.Options{Daemon: c.daemon})
			for _, r := range rep.Results {
				if r.Status != conformance.Pass {
					t.Errorf("%s: %s\n%s", r.ID, r.Reason, r.WireLog)
				}
			}
			wantName := c.daemon.String()
			if c.daemon.IsZero() {
				wantName = "" // no line picked: the report says nothing
			}
			if rep.Daemon != wantName {
				t.Errorf("report names daemon %q, want %q", rep.Daemon, wantName)
			}
			if !target.Daemon.IsZero() {
				t.Errorf("RunAll changed the caller's target to daemon %s", target.Daemon)
			}
		})
	}
}
