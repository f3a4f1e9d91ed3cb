package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// This file holds what the four ports of the official testkit (v0.3.0,
// host-and-lifecycle.md §13) share: its way of spawning and talking to a
// plugin, its error texts and its keyword skip classifier. The kind files
// build their scenarios from these so the ported ones behave alike.

// Per-call budgets of the testkit suites (§13: "3 s or 5 s depending on the
// suite").
const (
	subjectCallBudget = 5 * time.Second // subject.md §6
	shortCallBudget   = 3 * time.Second // trigger, log-storage, transport schema/shutdown
	transportStartTTL = 5 * time.Second // transport-http.md §4: transport/start
)

// testkitSpawn starts a fresh process as the testkit does (§13): the harness
// environment inherited, cwd a fresh temp dir, the testkit's initialize
// (protocol 1.0.0, progress:false, first id-bearing frame taken as the reply,
// 10 s) and `initialized` with params {}. The testkit reads stdout line by
// line and fails on a line that is not one JSON value, so the strict line
// reader stands in for it. Errors read "spawn: …" or "handshake: …", as the
// testkit's do, because the trigger suite classifies those texts too.
func testkitSpawn(ctx context.Context, s *Session, mutate ...func(*fakehost.Config)) (*fakehost.Host, *fakehost.InitializeResult, error) {
	base := func(c *fakehost.Config) {
		c.EnvMode = fakehost.EnvInherit
		c.LineMode = true
	}
	h, res, err := s.SpawnReady(ctx, fakehost.Handshake{Preset: fakehost.PresetTestkit(s.Kind)},
		append([]func(*fakehost.Config){base}, mutate...)...)
	switch {
	case err != nil && h == nil:
		return nil, nil, fmt.Errorf("spawn: %w", err)
	case err != nil:
		return nil, nil, fmt.Errorf("handshake: %w", err)
	}
	return h, res, nil
}

// testkitCall is the testkit's call_method: a request with the next integer
// id and a budget. An error response becomes "<method> returned error: <msg>
// (code N)", an absent result reads as null, and a non-JSON stdout line seen
// meanwhile fails the call (the testkit's reader stops there).
func testkitCall(ctx context.Context, h *fakehost.Host, budget time.Duration, method string, params any) (json.RawMessage, error) {
	resp, err := call(ctx, h, budget, method, params)
	if err == nil {
		err = garbageError(h)
	}
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("%s returned error: %s (code %d)", method, resp.Error.Message, resp.Error.Code)
	}
	if resp.Result == nil {
		return json.RawMessage("null"), nil
	}
	return resp.Result, nil
}

// garbageError reports the first non-JSON stdout line the fake host saw, in
// the testkit's words.
func garbageError(h *fakehost.Host) error {
	for _, v := range h.Violations() {
		if strings.HasPrefix(v, "non-JSON bytes on stdout") {
			return fmt.Errorf("invalid JSON frame: %s", v)
		}
	}
	return nil
}

// configKeywords are the testkit's external_config_missing words (§13,
// subject.md §6 row 3, trigger-slack.md §4).
var configKeywords = []string{"must be set", "must include", "missing", "not configured", "required", "unset", "api token", "auth"}

// configMissing is the keyword skip classifier. The testkit lower-cases
// ASCII only (to_ascii_lowercase), so this does too.
func configMissing(text string) bool {
	b := []byte(text)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	lower := string(b)
	for _, k := range configKeywords {
		if strings.Contains(lower, k) {
			return true
		}
	}
	return false
}

// scenarioKindHandshake is every suite's `handshake`: plugin_info.plugin_kind
// must equal the suite's kind exactly; a plugin_kinds entry does not count
// (host-and-lifecycle §6.2). The testkit reuses its throw-away handshake;
// this does a fresh testkit one, which is the same exchange.
func scenarioKindHandshake(pluginKind string) func(context.Context, *Session) Outcome {
	return func(ctx context.Context, s *Session) Outcome {
		_, res, err := testkitSpawn(ctx, s)
		if err != nil {
			return failf("%v", err)
		}
		if res.PluginInfo.PluginKind != pluginKind {
			return failf("plugin_kind = `%s`, expected `%s`", res.PluginInfo.PluginKind, pluginKind)
		}
		return pass()
	}
}

// peekResponse returns the response with id if it has arrived, without
// waiting; lost is true once the plugin's stdout is gone without it.
func peekResponse(h *fakehost.Host, id string) (resp *fakehost.Response, lost bool) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	resp, err := h.Await(ctx, json.RawMessage(id))
	return resp, errors.Is(err, fakehost.ErrConnectionLost)
}

// snapshot returns the reply with id (nil if it has not come) and every
// notification so far, as one consistent cut of the arrival order: if the
// reply arrived while the notifications were being copied, ok is false and
// the caller looks again. Frames carry arrival times, so the streaming
// loops can then replay the testkit's sequential reader over the cut. lost
// is read first: once stdout is gone the reader has published every frame,
// so a cut that reports lost is complete.
func snapshot(h *fakehost.Host, id string) (resp *fakehost.Response, notes []fakehost.Notification, lost, ok bool) {
	before, lost := peekResponse(h, id)
	notes = h.Notifications()
	resp, _ = peekResponse(h, id)
	if before == nil && resp != nil {
		return nil, nil, false, false
	}
	return resp, notes, lost, true
}

// sendAsync writes a request with an explicit id without waiting for its
// reply; the streaming scenarios read the reply with peekResponse so they can
// order it against the notifications around it.
func sendAsync(ctx context.Context, h *fakehost.Host, id, method string, params any) {
	go func() { _, _ = h.Request(ctx, json.RawMessage(id), method, params) }()
}

// pollInterval is how often the streaming loops look at what has arrived.
// Frames carry arrival times, so ordering does not depend on it.
const pollInterval = 5 * time.Millisecond

// freePort is the testkit's free_port: bind 127.0.0.1:0, note the port,
// release it.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free_port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// methodPicker is the subject suite's method choice (subject.md §6): K/verb
// when advertised, else subject/verb, else "" (skip). K is the first
// subject_kinds entry of the initial handshake.
func methodPicker(res *fakehost.InitializeResult) func(verb string) string {
	return func(verb string) string {
		if res == nil {
			return ""
		}
		has := func(m string) bool { return contains(res.Capabilities.Methods, m) }
		if len(res.Capabilities.SubjectKinds) > 0 {
			if m := res.Capabilities.SubjectKinds[0] + "/" + verb; has(m) {
				return m
			}
		}
		if m := "subject/" + verb; has(m) {
			return m
		}
		return ""
	}
}

// short clips a JSON value for a reason, as the testkit's short() does.
func short(raw []byte) string {
	if len(raw) > 120 {
		return string(raw[:120]) + "…"
	}
	return string(raw)
}
