package fakehost

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Each daemon line must put exactly the documented initialize params on
// the wire for the caller the plugin's kind selects (animus-0.7.md §2,
// queue-v2.md §1.2): the generic host announces 1.0.0 (0.6) or 1.2.0 (0.7)
// with host_info.version 0.1.0 and no init_extensions; the per-kind
// clients announce 1.1.0, the CLI version and project_binding, plus
// memory_mcp_stdio_command where that client sends it.
func TestDaemonLineBytes(t *testing.T) {
	const (
		allCaps   = `"capabilities":{"streaming":true,"progress":true,"cancellation":true}`
		sortedAll = `"capabilities":{"cancellation":true,"progress":true,"streaming":true}`
		runner    = `"capabilities":{"cancellation":true,"progress":false,"streaming":false}`
		noCaps    = `"capabilities":{"cancellation":false,"progress":false,"streaming":false}`
		memory    = `"memory_mcp_stdio_command":{"command":"/usr/local/bin/animus"},`
	)
	generic := func(proto string) func(string) string {
		return func(string) string {
			return `{"protocol_version":"` + proto + `","host_info":{"name":"animus","version":"0.1.0"},` + allCaps + `}`
		}
	}
	// perKind renders a kind client's sorted params.
	perKind := func(caps, host, version, mem string) func(string) string {
		return func(root string) string {
			return `{` + caps + `,"host_info":{"name":"` + host + `","version":"` + version + `"},"init_extensions":{` + mem +
				`"project_binding":{"project_root":"` + root + `","repo_scope":"` + RepoScope(root) + `"}},"protocol_version":"1.1.0"}`
		}
	}
	cases := []struct {
		daemon  Daemon
		kinds   []string
		params  func(root string) string
		hasExts bool
	}{
		{Daemon06, []string{"subject", "trigger", "log-storage", "transport", "subject_backend"}, generic("1.0.0"), false},
		{Daemon06, []string{"queue"}, perKind(sortedAll, "animus", "0.6.33", memory), true},
		{Daemon06, []string{"durable", "durable_store"}, perKind(runner, "animus-agent-runner", "0.6.33", ""), true},
		{Daemon06, []string{"notifier"}, perKind(noCaps, "animus", "0.6.33", ""), true},
		{Daemon07, []string{"subject", "trigger", "log-storage", "transport", "log_storage_backend"}, generic("1.2.0"), false},
		{Daemon07, []string{"queue"}, perKind(sortedAll, "animus", "0.7.0-rc.52", memory), true},
		{Daemon07, []string{"durable", "durable_store"}, perKind(runner, "animus-agent-runner", "0.7.0-rc.52", ""), true},
		{Daemon07, []string{"notifier"}, perKind(noCaps, "animus", "0.7.0-rc.52", memory), true},
	}
	for _, c := range cases {
		for _, kind := range c.kinds {
			t.Run(c.daemon.String()+"/"+kind, func(t *testing.T) {
				t.Parallel()
				// The line comes from the Config, as e2etest and the
				// conformance runner set it.
				cfg := miniConfig("good")
				cfg.Daemon = c.daemon
				h := New(t, cfg)
				mustInit(t, h, Handshake{Preset: PresetFor(kind)})
				got := sentParams(t, h)
				if want := c.params(h.ProjectRoot()); got != want {
					t.Errorf("initialize params\n got %s\nwant %s", got, want)
				}
				if has := strings.Contains(got, `"init_extensions"`); has != c.hasExts {
					t.Errorf("init_extensions present = %v, want %v", has, c.hasExts)
				}
			})
		}
	}
}

// TestDaemonLineSelection: Handshake.Daemon overrides Config.Daemon,
// explicit fields override the line, the zero line keeps the presets'
// own values, and the testkit (not a daemon) ignores the line.
func TestDaemonLineSelection(t *testing.T) {
	cases := []struct {
		name   string
		cfg    Daemon
		hs     Handshake
		prefix string // the params start with this
	}{
		{"handshake line wins over config", Daemon06, Daemon07.Handshake("subject"),
			`{"protocol_version":"1.2.0","host_info":{"name":"animus","version":"0.1.0"}`},
		{"explicit version wins over line", Daemon07, Handshake{Preset: PresetDaemon, ProtocolVersion: "1.9.0", HostVersion: "9"},
			`{"protocol_version":"1.9.0","host_info":{"name":"animus","version":"9"}`},
		{"zero line keeps the preset", Daemon{}, Handshake{Preset: PresetDaemon},
			`{"protocol_version":"` + HostProtocolVersion + `","host_info":{"name":"animus","version":"` + DaemonVersion + `"}`},
		{"testkit ignores the line", Daemon07, Handshake{Preset: PresetTestkit("subject")},
			`{"protocol_version":"1.0.0","host_info":{"name":"animus-subject-conformance","version":"0.3.0"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := miniConfig("good")
			cfg.Daemon = c.cfg
			h := New(t, cfg)
			mustInit(t, h, c.hs)
			if got := sentParams(t, h); !strings.HasPrefix(got, c.prefix) {
				t.Errorf("initialize params\n got %s\nwant prefix %s", got, c.prefix)
			}
		})
	}
}

func TestParseDaemon(t *testing.T) {
	for in, want := range map[string]string{"": "default", "0.6": "0.6", "v0.7": "0.7", "0.7": "0.7"} {
		d, err := ParseDaemon(in)
		if err != nil || d.String() != want {
			t.Errorf("ParseDaemon(%q) = %v, %v; want %s", in, d, err, want)
		}
	}
	if _, err := ParseDaemon("0.8"); err == nil {
		t.Error("ParseDaemon(0.8) succeeded")
	}
}

// sentParams returns the params of the initialize frame as the plugin
// read them (the miniplugin echoes every stdin line to stderr as
// "recv: <line>").
func sentParams(t *testing.T, h *Host) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(testCtx(t), 3*time.Second)
	defer cancel()
	const head = `recv: {"jsonrpc":"2.0","id":1,"method":"initialize","params":`
	if err := h.WaitStderr(ctx, head); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(h.Stderr(), "\n") {
		if params, ok := strings.CutPrefix(line, head); ok {
			return strings.TrimSuffix(params, "}")
		}
	}
	t.Fatal("initialize frame not echoed")
	return ""
}
