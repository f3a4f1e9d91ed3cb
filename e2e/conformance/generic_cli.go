package conformance

import (
	"bytes"
	"context"
	"errors"

	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

func cliScenarios() []Scenario {
	return []Scenario{
		{"generic", "manifest", scenarioManifest},
		{"generic", "manifest-narrow-env", scenarioManifestNarrow},
		{"generic", "version-and-help", scenarioVersionHelp},
		{"generic", "tty-guard", scenarioTTYGuard},
	}
}

// scenarioManifest: the daemon's probe accepts the manifest; it is one
// line, speaks major 1, and lists the same capabilities initialize does.
func scenarioManifest(ctx context.Context, s *Session) Outcome {
	m, err := fakehost.Probe(ctx, s.Binary, fakehost.ProbeOptions{Schemas: s.Schemas, Env: s.Env})
	if err != nil {
		return failf("%v", err)
	}
	if bytes.ContainsRune(m.Raw, '\n') {
		return failf("manifest spans several lines; reference plugins print one")
	}
	if !strings.HasPrefix(m.ProtocolVersion, "1.") {
		return failf("manifest protocol_version %q is not major 1", m.ProtocolVersion)
	}
	if m.Name != s.Init.PluginInfo.Name || m.PluginKind != s.Init.PluginInfo.PluginKind || m.Version != s.Init.PluginInfo.Version {
		return failf("manifest identity %s/%s/%s differs from initialize's %s/%s/%s",
			m.Name, m.PluginKind, m.Version, s.Init.PluginInfo.Name, s.Init.PluginInfo.PluginKind, s.Init.PluginInfo.Version)
	}
	if a, b := sortedCopy(m.Capabilities), sortedCopy(s.Init.Capabilities.Methods); strings.Join(a, ",") != strings.Join(b, ",") {
		return failf("manifest capabilities %v differ from initialize capabilities.methods %v", a, b)
	}
	for _, e := range m.EnvRequired {
		if e.Name == "" {
			return failf("env_required has an entry without a name")
		}
	}
	return pass()
}

// scenarioManifestNarrow: the queue/trigger/notifier spawn paths use the
// narrower allowlist (no USER, SHELL, TERM); -m is the short flag.
func scenarioManifestNarrow(ctx context.Context, s *Session) Outcome {
	_, err := fakehost.Probe(ctx, s.Binary, fakehost.ProbeOptions{
		Allowlist: fakehost.AllowlistNarrow, Args: []string{"-m"}, Schemas: s.Schemas,
	})
	if err != nil {
		return failf("-m with the narrow allowlist: %v", err)
	}
	return pass()
}

// scenarioVersionHelp: --version and --help exit 0 without serving. They
// are not in the spec, so a plugin that lacks them is skipped, not failed.
func scenarioVersionHelp(ctx context.Context, s *Session) Outcome {
	for _, arg := range []string{"--version", "--help"} {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		cmd := exec.CommandContext(ctx, s.Binary, arg)
		var out, errs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errs
		err := cmd.Run()
		cancel()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			return skipf("%s exits %d (not required by the spec)", arg, exit.ExitCode())
		case err != nil:
			return failf("%s: %v", arg, err)
		case out.Len()+errs.Len() == 0:
			return failf("%s printed nothing", arg)
		}
		if arg == "--version" && !strings.Contains(out.String(), s.Manifest.Version) {
			return failf("--version printed %q, which lacks the manifest version %s", strings.TrimSpace(out.String()), s.Manifest.Version)
		}
	}
	return pass()
}

// scenarioTTYGuard: with a terminal on stdin and no arguments the plugin
// prints a hint to stderr and exits 2 (spec §3.1).
func scenarioTTYGuard(ctx context.Context, s *Session) Outcome {
	master, slave, err := openPTY()
	if err != nil {
		return failf("cannot open a pseudo-terminal to test with: %v", err)
	}
	defer master.Close()
	defer slave.Close()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Binary)
	var errs, out bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &out, &errs
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return failf("with a terminal on stdin the plugin kept running (spec §3.1: hint and exit 2)")
	case errors.As(err, &exit) && exit.ExitCode() == 2:
	default:
		return failf("with a terminal on stdin: exit %v, want 2", err)
	}
	if strings.TrimSpace(errs.String()) == "" {
		return failf("no usage hint on stderr")
	}
	if out.Len() > 0 {
		return failf("printed %q on stdout", out.String())
	}
	return pass()
}

func sortedCopy(in []string) []string {
	out := append([]string(nil), in...)
	sort.Strings(out)
	return out
}
