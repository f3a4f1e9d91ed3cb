package e2etest

import (
	"context"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// SpawnTimeout bounds the handshake Spawn completes: the daemon's callers
// allow 30 s (a preset with a shorter limit of its own, such as the
// notifier's 5 s, still applies it).
const SpawnTimeout = 30 * time.Second

// Options describes how one of the daemon's callers spawns a plugin. The
// zero value is the generic plugin host: the full allowlist, a fresh
// project root, the upstream schemas and PresetDaemon's handshake.
type Options struct {
	// Dir is the project root and the plugin's cwd; "" is a fresh Project.
	Dir string
	// EnvMode is the caller's allowlist: fakehost.EnvDaemon (generic host,
	// subject router, durable client) or fakehost.EnvDaemonNarrow (queue,
	// trigger, log-storage and notifier spawn paths).
	EnvMode fakehost.EnvMode
	// Env is the daemon's environment overlay: only allowlisted and
	// declared names reach the plugin, as in the daemon.
	Env map[string]string
	// Extra always reaches the plugin (the notifier dispatcher's *_env
	// names).
	Extra map[string]string
	// Declared is env_required as discovery learned it (see Declared); nil
	// makes the fake host probe the manifest before every spawn.
	Declared []string
	// Schemas checks every frame; nil is the upstream set (Schemas).
	Schemas *schemacheck.Set
	// Handshake is the caller's initialize; the zero value is PresetDaemon.
	Handshake fakehost.Handshake
	// Daemon is the daemon line spawning the plugin (fakehost.Daemon06,
	// fakehost.Daemon07): Handshake's preset then sends that line's bytes.
	// The zero value keeps the presets' own values.
	Daemon fakehost.Daemon
}

// Config is the fake host configuration Spawn uses, for tests that start
// the process themselves (to see it fail before the handshake, to kill it,
// or to inspect violations they provoke). binary is a name binaries.Path
// resolves, such as "animus-queue-sqlite".
func Config(t testing.TB, binary string, o Options) fakehost.Config {
	t.Helper()
	if o.Dir == "" {
		o.Dir = Project(t)
	}
	if o.Schemas == nil {
		o.Schemas = Schemas(t)
	}
	return fakehost.Config{Binary: binaries.Path(t, binary), Dir: o.Dir, EnvMode: o.EnvMode, Env: o.Env,
		Extra: o.Extra, Declared: o.Declared, Schemas: o.Schemas, Daemon: o.Daemon}
}

// Spawn starts binary as o's caller does and completes its handshake,
// failing t if either fails. The process lives until the test ends:
// fakehost.New kills and reaps it at cleanup, prints its wire log and
// stderr if the test failed, and fails the test on any protocol violation.
// A test that needs the initialize reply itself runs the handshake on a
// fakehost.New(t, Config(...)).
func Spawn(t testing.TB, binary string, o Options) *fakehost.Host {
	t.Helper()
	return SpawnContext(t, context.Background(), binary, o)
}

// SpawnContext is Spawn with the handshake also bounded by ctx, for tests
// that hold a deadline of their own.
func SpawnContext(t testing.TB, ctx context.Context, binary string, o Options) *fakehost.Host {
	t.Helper()
	h := fakehost.New(t, Config(t, binary, o))
	ctx, cancel := context.WithTimeout(ctx, SpawnTimeout)
	defer cancel()
	if _, err := h.Initialize(ctx, o.Handshake); err != nil {
		t.Fatalf("%s: initialize: %v", binary, err)
	}
	return h
}

// Declared probes binary's manifest as the daemon's discovery does (once,
// not before every spawn) and returns its env_required names, for
// Options.Declared.
func Declared(t testing.TB, binary string) []string {
	t.Helper()
	m, err := fakehost.Probe(context.Background(), binaries.Path(t, binary), fakehost.ProbeOptions{Schemas: Schemas(t)})
	if err != nil {
		t.Fatalf("%s --manifest: %v", binary, err)
	}
	return m.EnvNames()
}

// Shutdown runs ladder and requires the plugin to exit by itself with code
// 0, which is what the daemon expects of a plugin asked to stop. The
// ladder bounds itself, so no deadline is needed here.
func Shutdown(t testing.TB, h *fakehost.Host, ladder fakehost.Ladder) *fakehost.ExitReport {
	t.Helper()
	rep, err := h.Shutdown(context.Background(), ladder)
	if err != nil || !rep.ExitedByItself || rep.ExitCode != 0 {
		t.Fatalf("%s shutdown ladder: report %+v, err %v; want an exit by itself with code 0", ladder, rep, err)
	}
	return rep
}
