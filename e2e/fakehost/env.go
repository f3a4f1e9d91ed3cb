package fakehost

import (
	"os"
	"sort"
	"strings"
)

// AllowlistFull is the daemon's base environment allowlist as documented for
// the generic plugin host (host-and-lifecycle §5).
var AllowlistFull = []string{
	"PATH", "HOME", "USER", "SHELL", "TERM", "TMPDIR",
	"LANG", "LC_ALL", "RUST_LOG", "RUST_BACKTRACE", "TZ",
}

// AllowlistNarrow is the variant documented for the queue, trigger,
// log-storage and notifier spawn paths: no USER, SHELL or TERM. Plugins must
// work under both, so tests should run the narrow one too.
var AllowlistNarrow = []string{
	"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "RUST_LOG", "RUST_BACKTRACE", "TZ",
}

// EnvMode selects how the plugin's environment is built at spawn.
type EnvMode int

const (
	// EnvDaemon: env_clear(), then the AllowlistFull names that are set in
	// the daemon's environment, the declared env_required names that are
	// set, and Config.Extra.
	EnvDaemon EnvMode = iota
	// EnvDaemonNarrow: as EnvDaemon with AllowlistNarrow.
	EnvDaemonNarrow
	// EnvInherit: the testkit's behaviour, the whole environment inherited
	// (plus Config.Extra).
	EnvInherit
)

func (m EnvMode) String() string {
	switch m {
	case EnvDaemon:
		return "daemon"
	case EnvDaemonNarrow:
		return "daemon-narrow"
	case EnvInherit:
		return "inherit"
	}
	return "EnvMode(?)"
}

func (m EnvMode) allowlist() []string {
	if m == EnvDaemonNarrow {
		return AllowlistNarrow
	}
	return AllowlistFull
}

// daemonEnviron is the environment the simulated daemon runs with: this
// process's environment overlaid with the test's additions. Tests describe
// "what the daemon had" this way instead of mutating the real environment, so
// they can run in parallel.
func daemonEnviron(overlay map[string]string) map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			env[k] = v
		}
	}
	for k, v := range overlay {
		env[k] = v
	}
	return env
}

// filterEnv keeps the names in allow (and then in more) that are set in
// daemon, adds extra unconditionally, and returns a sorted KEY=VALUE list.
// The result is never nil: os/exec treats a nil Env as "inherit everything",
// which is exactly the leak this function exists to prevent.
func filterEnv(daemon map[string]string, allow, more []string, extra map[string]string) []string {
	keep := map[string]string{}
	for _, list := range [][]string{allow, more} {
		for _, k := range list {
			if v, ok := daemon[k]; ok {
				keep[k] = v
			}
		}
	}
	for k, v := range extra {
		keep[k] = v
	}
	return sortedEnv(keep)
}

func sortedEnv(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// spawnEnv builds the child environment for mode (host-and-lifecycle §5).
func spawnEnv(mode EnvMode, overlay map[string]string, declared []string, extra map[string]string) []string {
	daemon := daemonEnviron(overlay)
	if mode == EnvInherit {
		for k, v := range extra {
			daemon[k] = v
		}
		return sortedEnv(daemon)
	}
	return filterEnv(daemon, mode.allowlist(), declared, extra)
}
