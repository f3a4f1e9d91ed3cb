package fakehost

import (
	"fmt"
	"strings"
)

// Daemon is one Animus daemon line: what its callers put in `initialize`.
// Each line has two kinds of caller, and the plugin's kind decides which
// one spawns it (Daemon.Handshake, PresetFor):
//
//   - the generic plugin host (subject router, trigger supervisor,
//     log-storage supervisor, transports, plugin tooling): host "animus",
//     all capabilities true, no init_extensions;
//   - the per-kind clients (queue client, notifier dispatcher, the
//     runner's durable-store client): protocol "1.1.0" hard-coded in every
//     line, the CLI version as host_info.version, and
//     init_extensions.project_binding.
//
// The two lines differ in what the generic host announces (0.6.33 sent
// "1.0.0", 0.7 sends "1.2.0", both with the plugin-host crate's "0.1.0" as
// host_info.version), in the per-kind clients' host_info.version, and in
// the 0.7 notifier dispatcher also sending memory_mcp_stdio_command
// (animus-0.7.md §2, §5; queue-v2.md §1.2, from the wire capture against
// 0.6.33 and 0.7.0-rc.52).
//
// The zero Daemon keeps the presets' own values (HostProtocolVersion and
// DaemonVersion for every daemon caller, the handshake the fake host has
// always sent), so callers that pick no line see no change.
type Daemon struct {
	name    string
	generic daemonCaller
	perKind daemonCaller
	// notifierMemoryMCP: the dispatcher adds memory_mcp_stdio_command.
	notifierMemoryMCP bool
}

// daemonCaller is what one caller of a line announces.
type daemonCaller struct{ protocol, hostVersion string }

// The daemon lines the fake host speaks.
var (
	// Daemon06 is Animus 0.6.33, the newest stable line.
	Daemon06 = Daemon{
		name:    "0.6",
		generic: daemonCaller{protocol: "1.0.0", hostVersion: "0.1.0"},
		perKind: daemonCaller{protocol: "1.1.0", hostVersion: "0.6.33"},
	}
	// Daemon07 is Animus 0.7.0-rc.52, the newest 0.7 build seen on the wire.
	Daemon07 = Daemon{
		name:              "0.7",
		generic:           daemonCaller{protocol: "1.2.0", hostVersion: "0.1.0"},
		perKind:           daemonCaller{protocol: "1.1.0", hostVersion: "0.7.0-rc.52"},
		notifierMemoryMCP: true,
	}
)

// Daemons returns every line, oldest first, for tests that must pass
// under each.
func Daemons() []Daemon { return []Daemon{Daemon06, Daemon07} }

// ParseDaemon maps a flag value ("0.6", "0.7", with or without a leading
// "v"; "" for the zero Daemon) to its line.
func ParseDaemon(s string) (Daemon, error) {
	if s == "" {
		return Daemon{}, nil
	}
	for _, d := range Daemons() {
		if strings.TrimPrefix(s, "v") == d.name {
			return d, nil
		}
	}
	return Daemon{}, fmt.Errorf("unknown daemon line %q (want 0.6 or 0.7)", s)
}

// String is the line's name ("0.6", "0.7"), or "default" for the zero
// Daemon.
func (d Daemon) String() string {
	if d.IsZero() {
		return "default"
	}
	return d.name
}

// IsZero reports whether d is the zero Daemon (no line picked).
func (d Daemon) IsZero() bool { return d == Daemon{} }

// Handshake is the initialize of the caller that spawns a plugin of kind
// under this line.
func (d Daemon) Handshake(kind string) Handshake {
	return Handshake{Preset: PresetFor(kind), Daemon: d}
}

// PresetFor returns the daemon caller that spawns a plugin of kind (a
// plugin_kind value or a conformance suite name): the per-kind client for
// queues, notifiers and durable stores, the generic host for everything
// else.
func PresetFor(kind string) Preset {
	switch kind {
	case "queue":
		return PresetQueueClient
	case "notifier":
		return PresetNotifier
	case "durable", "durable_store":
		return PresetDurableClient
	}
	return PresetDaemon
}

// announce returns what a daemon caller of this line sends as
// protocol_version and host_info.version, and whether it adds
// memory_mcp_stdio_command, starting from the preset's own values. The
// zero Daemon and the testkit (not a daemon) keep the preset's values.
func (d Daemon) announce(p presetID, proto, version string, memory bool) (string, string, bool) {
	if d.IsZero() {
		return proto, version, memory
	}
	switch p {
	case presetDaemon:
		return d.generic.protocol, d.generic.hostVersion, memory
	case presetQueue, presetDurable:
		return d.perKind.protocol, d.perKind.hostVersion, memory
	case presetNotifier:
		return d.perKind.protocol, d.perKind.hostVersion, memory || d.notifierMemoryMCP
	}
	return proto, version, memory
}
