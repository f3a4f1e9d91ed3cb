package fakehost

import (
	"context"
	"errors"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

func TestProbe(t *testing.T) {
	schemas, err := schemacheck.Default()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		mode    string // "" = plain binary (good)
		opts    ProbeOptions
		failure ProbeFailure // "" = success
		detail  string
	}{
		{name: "good manifest", opts: ProbeOptions{Schemas: schemas}},
		{name: "short flag -m", opts: ProbeOptions{Args: []string{"-m"}}},
		{name: "extra stdout after the object", mode: "manifest-garbage", failure: ProbeNotOneValue},
		{name: "missing description", mode: "manifest-no-description", failure: ProbeMissing, detail: "description"},
		{name: "non-zero exit", mode: "manifest-exit1", failure: ProbeExitStatus},
		{name: "stdout over 1 MiB", mode: "manifest-huge", failure: ProbeOverCap},
		{name: "timeout kills the child", mode: "manifest-slow", opts: ProbeOptions{Timeout: 300 * time.Millisecond}, failure: ProbeTimedOut},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bin := miniBin
			if c.mode != "" {
				bin = miniAs(t, c.mode)
			}
			start := time.Now()
			m, err := Probe(context.Background(), bin, c.opts)
			if c.failure == "" {
				if err != nil {
					t.Fatal(err)
				}
				if m.Name != "miniplugin" || m.Description != "fakehost test plugin" || m.ProtocolVersion != "1.1.0" || m.PluginKind != "custom" {
					t.Errorf("manifest = %+v", m)
				}
				if got := m.EnvNames(); !slices.Equal(got, []string{"MINIPLUGIN_MODE", "MINI_DECLARED", "MINI_DECLARED_UNSET"}) {
					t.Errorf("env_required = %v", got)
				}
				return
			}
			var pe *ProbeError
			if !errors.As(err, &pe) || pe.Failure != c.failure {
				t.Fatalf("err = %v, want failure %q", err, c.failure)
			}
			if c.detail != "" && pe.Detail != c.detail {
				t.Errorf("detail = %q, want %q", pe.Detail, c.detail)
			}
			if c.failure == ProbeExitStatus && pe.ExitCode != 1 {
				t.Errorf("exit code = %d", pe.ExitCode)
			}
			if el := time.Since(start); el > 3*time.Second {
				t.Errorf("probe took %v", el)
			}
		})
	}
}

// The probe's child must see only allowlisted variables: the manifest-env
// mode reports its environment names as its capabilities. MINIPLUGIN_MODE is
// in the daemon's environment too, and had it leaked the plugin would have
// switched to the "good" mode and reported ["health/check"].
func TestProbeEnvIsScrubbed(t *testing.T) {
	overlay := map[string]string{
		"USER": "tester", "SHELL": "/bin/sh", "TERM": "dumb", "TZ": "UTC",
		"MINI_DECLARED": "declared-but-not-for-the-probe", "MINIPLUGIN_MODE": "good", "SOME_SECRET": "x",
	}
	for name, allow := range map[string][]string{"full": AllowlistFull, "narrow": AllowlistNarrow} {
		t.Run(name, func(t *testing.T) {
			m, err := Probe(context.Background(), miniAs(t, "manifest-env"), ProbeOptions{Allowlist: allow, Env: overlay})
			if err != nil {
				t.Fatal(err)
			}
			daemon := daemonEnviron(overlay)
			var want []string
			for _, k := range allow {
				if _, ok := daemon[k]; ok {
					want = append(want, k)
				}
			}
			sort.Strings(want)
			got := slices.Sorted(slices.Values(m.Capabilities))
			if !slices.Equal(got, want) {
				t.Errorf("probe env names = %v, want %v", got, want)
			}
		})
	}
}
