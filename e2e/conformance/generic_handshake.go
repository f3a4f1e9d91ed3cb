package conformance

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

func handshakeScenarios() []Scenario {
	return []Scenario{
		{"generic", "handshake-daemon", scenarioHandshake(fakehost.Handshake{Preset: fakehost.PresetDaemon})},
		{"generic", "handshake-testkit", scenarioHandshakeTestkit},
		{"generic", "handshake-queue-client", scenarioHandshake(fakehost.Handshake{Preset: fakehost.PresetQueueClient})},
		{"generic", "handshake-durable-client", scenarioHandshake(fakehost.Handshake{Preset: fakehost.PresetDurableClient})},
		{"generic", "handshake-notifier", scenarioHandshake(fakehost.Handshake{Preset: fakehost.PresetNotifier})},
		{"generic", "handshake-host-1.2.0", scenarioHandshake(fakehost.Handshake{Preset: fakehost.PresetDaemon, ProtocolVersion: "1.2.0"})},
		{"generic", "handshake-major-mismatch", scenarioMajorMismatch},
		{"generic", "initialize-twice", scenarioInitializeTwice},
		{"generic", "domain-before-initialize", scenarioDomainBeforeInit},
	}
}

// scenarioHandshake: the caller's exact initialize frame is accepted, the
// reply is a schema-valid InitializeResult whose identity matches the
// manifest, and `initialized` (with or without params) is never answered.
func scenarioHandshake(hs fakehost.Handshake) func(context.Context, *Session) Outcome {
	return func(ctx context.Context, s *Session) Outcome {
		h, res, err := s.SpawnReady(ctx, hs)
		if err != nil {
			return failf("%v", err)
		}
		if res.PluginInfo.Name != s.Manifest.Name || res.PluginInfo.PluginKind != s.Manifest.PluginKind {
			return failf("plugin_info %s/%s differs from the manifest's %s/%s",
				res.PluginInfo.Name, res.PluginInfo.PluginKind, s.Manifest.Name, s.Manifest.PluginKind)
		}
		if !contains(res.Capabilities.Methods, "health/check") {
			return failf("capabilities.methods lacks health/check")
		}
		// A ping after initialized flushes any reply to the notification.
		resp, err := call(ctx, h, 2*time.Second, "$/ping", nil)
		if err != nil {
			return failf("%v", err)
		}
		if err := wantResult(resp, nil); err != nil {
			return failf("%v", err)
		}
		return pass()
	}
}

// scenarioHandshakeTestkit: the official testkit's handshake (protocol
// 1.0.0, progress:false, `initialized` with params {}), where the first
// id-bearing frame is taken as the reply and plugin_kind must match exactly.
func scenarioHandshakeTestkit(ctx context.Context, s *Session) Outcome {
	_, res, err := s.SpawnReady(ctx, fakehost.Handshake{Preset: fakehost.PresetTestkit(s.Kind)}, func(c *fakehost.Config) {
		c.EnvMode = fakehost.EnvInherit
	})
	if err != nil {
		return failf("%v", err)
	}
	if res.PluginInfo.PluginKind != s.Manifest.PluginKind {
		return failf("plugin_kind %q, manifest says %q", res.PluginInfo.PluginKind, s.Manifest.PluginKind)
	}
	return pass()
}

// scenarioMajorMismatch: a host speaking protocol 2.x is refused with
// -32600 naming both versions, and the process still accepts a compatible
// initialize afterwards.
func scenarioMajorMismatch(ctx context.Context, s *Session) Outcome {
	h, err := s.Spawn(ctx)
	if err != nil {
		return failf("%v", err)
	}
	resp, err := call(ctx, h, 10*time.Second, "initialize", json.RawMessage(
		`{"protocol_version":"2.0.0","host_info":{"name":"animus","version":"9.0.0"},"capabilities":{"streaming":true,"progress":true,"cancellation":true}}`))
	if err != nil {
		return failf("%v", err)
	}
	if err := wantError(resp, -32600, ""); err != nil {
		return failf("initialize with protocol 2.0.0: %v", err)
	}
	if msg := resp.Error.Message; !strings.Contains(msg, "2.0.0") || !strings.Contains(msg, s.Init.ProtocolVersion) {
		return failf("error %q should name both versions (2.0.0 and %s)", msg, s.Init.ProtocolVersion)
	}
	if _, err := h.Initialize(ctx, fakehost.Handshake{Preset: fakehost.PresetDaemon}); err != nil {
		return failf("a compatible initialize after the refused one: %v", err)
	}
	return pass()
}

// scenarioInitializeTwice: a second initialize is -32600.
func scenarioInitializeTwice(ctx context.Context, s *Session) Outcome {
	h, _, err := s.SpawnReady(ctx, fakehost.Handshake{Preset: fakehost.PresetDaemon})
	if err != nil {
		return failf("%v", err)
	}
	resp, err := call(ctx, h, 5*time.Second, "initialize", json.RawMessage(
		`{"protocol_version":"1.1.0","host_info":{"name":"animus","version":"0.6.33"},"capabilities":{"streaming":true,"progress":true,"cancellation":true}}`))
	if err != nil {
		return failf("%v", err)
	}
	if err := wantError(resp, -32600, ""); err != nil {
		return failf("second initialize: %v", err)
	}
	return pass()
}

// scenarioDomainBeforeInit: a domain method before initialize is -32000.
func scenarioDomainBeforeInit(ctx context.Context, s *Session) Outcome {
	method := s.DomainMethod()
	if method == "" {
		return skipf("the plugin advertises no domain method")
	}
	h, err := s.Spawn(ctx)
	if err != nil {
		return failf("%v", err)
	}
	// This request legitimately precedes the initialize reply.
	s.Allow("before the initialize reply")
	resp, err := call(ctx, h, 5*time.Second, method, json.RawMessage(`{}`))
	if err != nil {
		return failf("%v", err)
	}
	if err := wantError(resp, -32000, ""); err != nil {
		return failf("%s before initialize: %v", method, err)
	}
	return pass()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
