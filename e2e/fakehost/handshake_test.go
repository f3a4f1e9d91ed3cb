package fakehost

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRepoScope(t *testing.T) {
	for path, want := range map[string]string{
		"/abs/project":     "project-85a2ebccfd7e",
		"/srv/My Repo.git": "My-Repo-git-410b07617a10",
	} {
		if got := RepoScope(path); got != want {
			t.Errorf("RepoScope(%q) = %q, want %q", path, got, want)
		}
	}
}

// Each preset must put exactly the documented bytes on the wire; the
// miniplugin echoes every stdin line to stderr as "recv: <line>".
func TestPresetBytes(t *testing.T) {
	yes := true
	binding := func(root string) string {
		return `"project_binding":{"project_root":"` + root + `","repo_scope":"` + RepoScope(root) + `"}`
	}
	const daemonInitialized = `{"jsonrpc":"2.0","method":"initialized"}`
	const testkitInitialized = `{"jsonrpc":"2.0","method":"initialized","params":{}}`
	cases := []struct {
		name        string
		hs          Handshake
		initialize  func(root string) string
		initialized string
	}{
		{"generic daemon host", Handshake{Preset: PresetDaemon}, func(string) string {
			return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":"1.1.0","host_info":{"name":"animus","version":"0.6.33"},"capabilities":{"streaming":true,"progress":true,"cancellation":true}}}`
		}, daemonInitialized},
		{"queue client", Handshake{Preset: PresetQueueClient}, func(root string) string {
			return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"cancellation":true,"progress":true,"streaming":true},"host_info":{"name":"animus","version":"0.6.33"},"init_extensions":{"memory_mcp_stdio_command":{"command":"/usr/local/bin/animus"},` + binding(root) + `},"protocol_version":"1.1.0"}}`
		}, daemonInitialized},
		{"durable client", Handshake{Preset: PresetDurableClient}, func(root string) string {
			return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"cancellation":true,"progress":false,"streaming":false},"host_info":{"name":"animus-agent-runner","version":"0.6.33"},"init_extensions":{` + binding(root) + `},"protocol_version":"1.1.0"}}`
		}, daemonInitialized},
		{"notifier dispatcher", Handshake{Preset: PresetNotifier}, func(root string) string {
			return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"cancellation":false,"progress":false,"streaming":false},"host_info":{"name":"animus","version":"0.6.33"},"init_extensions":{` + binding(root) + `},"protocol_version":"1.1.0"}}`
		}, daemonInitialized},
		{"notifier with memory MCP", Handshake{Preset: PresetNotifier, MemoryMCP: true, MemoryMCPCommand: "/opt/animus"}, func(root string) string {
			return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"cancellation":false,"progress":false,"streaming":false},"host_info":{"name":"animus","version":"0.6.33"},"init_extensions":{"memory_mcp_stdio_command":{"command":"/opt/animus"},` + binding(root) + `},"protocol_version":"1.1.0"}}`
		}, daemonInitialized},
		{"testkit subject suite", Handshake{Preset: PresetTestkit("subject")}, func(string) string {
			return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":"1.0.0","host_info":{"name":"animus-subject-conformance","version":"0.3.0"},"capabilities":{"streaming":true,"progress":false,"cancellation":true}}}`
		}, testkitInitialized},
		{"0.6 listing handshake", Handshake{Preset: PresetDaemon, ProtocolVersion: "1.0.0", HostVersion: "0.1.0", ProjectBinding: true, InitializedParams: &yes}, func(root string) string {
			return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":"1.0.0","host_info":{"name":"animus","version":"0.1.0"},"capabilities":{"streaming":true,"progress":true,"cancellation":true},"init_extensions":{` + binding(root) + `}}}`
		}, testkitInitialized},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "my proj")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			cfg := miniConfig("good")
			cfg.Dir = dir
			h := New(t, cfg)
			res := mustInit(t, h, c.hs)
			if res.PluginInfo.Name != "miniplugin" || res.ProtocolVersion != "1.1.0" {
				t.Errorf("result = %+v", res)
			}
			// The echo is immediate; a short bound keeps a mismatch from
			// costing the full test timeout.
			ctx, cancel := context.WithTimeout(testCtx(t), 3*time.Second)
			defer cancel()
			if err := h.WaitStderr(ctx, "recv: "+c.initialize(h.ProjectRoot())+"\n"); err != nil {
				t.Error(err)
			}
			if err := h.WaitStderr(ctx, "recv: "+c.initialized+"\n"); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestInitializeChecks(t *testing.T) {
	cases := []struct {
		name    string
		mode    string
		proto   string // MINI_PROTO the plugin answers with
		hs      Handshake
		wantErr string // "" = success
		wantVio string
	}{
		{name: "major mismatch rejected by the daemon", mode: "good", proto: "2.0.0", hs: Handshake{Preset: PresetDaemon}, wantErr: "incompatible plugin protocol"},
		{name: "newer minor accepted", mode: "good", proto: "1.7.0", hs: Handshake{Preset: PresetQueueClient}},
		{name: "host 1.2.0 accepts plugin 1.1.0", mode: "good", hs: Handshake{Preset: PresetDaemon, ProtocolVersion: "1.2.0"}},
		{name: "testkit decodes but does not compare majors", mode: "good", proto: "2.0.0", hs: Handshake{Preset: PresetTestkit("trigger")}},
		{name: "id:null before reply fails the testkit", mode: "id-null-before-init", hs: Handshake{Preset: PresetTestkit("subject")}, wantErr: "first id-bearing frame has id null", wantVio: "before the initialize reply"},
		{name: "id:null before reply is dropped by the daemon", mode: "id-null-before-init", hs: Handshake{Preset: PresetDaemon}, wantVio: "before the initialize reply"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := Config{Binary: miniBin, EnvMode: EnvInherit, Extra: map[string]string{"MINIPLUGIN_MODE": c.mode, "MINI_PROTO": c.proto}}
			h := startRaw(t, cfg)
			ctx := testCtx(t)
			_, err := h.Initialize(ctx, c.hs)
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatal(err)
			case c.wantErr != "":
				if !errors.Is(err, ErrHandshake) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				// initialized must not follow a failed handshake.
				if _, err := h.Call(ctx, "$/ping", nil); err != nil {
					t.Fatal(err)
				}
				if err := h.WaitStderr(ctx, `"method":"$/ping"`); err != nil {
					t.Fatal(err)
				}
				if strings.Contains(h.Stderr(), `"initialized"`) {
					t.Error("initialized was sent after a failed handshake")
				}
			}
			vio := strings.Join(h.Violations(), "\n")
			if c.wantVio == "" && vio != "" || !strings.Contains(vio, c.wantVio) {
				t.Errorf("violations = %q, want %q", vio, c.wantVio)
			}
		})
	}
}
