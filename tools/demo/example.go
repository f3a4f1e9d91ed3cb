package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// exampleScript walks animus-example through the whole lifecycle: probe,
// handshake, a request, a stream, progress and cancellation, errors,
// health, and the daemon's shutdown ladder.
func exampleScript() Script {
	return Script{
		Binary: "animus-example",
		Kind:   "custom",
		Title:  "animus-example: the pluginkit runtime, end to end",
		Run:    runExample,
	}
}

func runExample(ctx context.Context, d *Demo) (string, error) {
	d.Step("Discovery: the daemon runs `animus-example --manifest` with a scrubbed environment")
	m, err := fakehost.Probe(ctx, d.BinDir+"/animus-example", fakehost.ProbeOptions{Schemas: d.Schemas})
	if err != nil {
		return "", err
	}
	d.Say("%s", shortJSON(m.Raw, 220))
	if err := d.Expect(m.PluginKind == "custom" && len(m.Capabilities) > 0, "manifest: %d capabilities, %d env vars declared", len(m.Capabilities), len(m.EnvRequired)); err != nil {
		return "", err
	}

	d.Step("Spawn with no arguments, cwd = project root; handshake as the daemon sends it")
	h, err := d.Spawn(ctx, "animus-example")
	if err != nil {
		return "", err
	}
	res, err := h.Initialize(ctx, fakehost.Handshake{Preset: fakehost.PresetDaemon})
	d.Frames(h)
	if err != nil {
		return "", err
	}
	if err := d.Expect(res.ProtocolVersion == "1.1.0", "protocol %s, methods %v", res.ProtocolVersion, res.Capabilities.Methods); err != nil {
		return "", err
	}

	d.Step("A typed request: example/echo")
	resp, err := d.Call(ctx, h, "example/echo", map[string]string{"message": "hello, Animus"})
	if err != nil {
		return "", err
	}
	if err := d.Expect(resp.Error == nil, "echoed"); err != nil {
		return "", err
	}

	d.Step("A stream: example/stream acknowledges, then sends notifications carrying the request id")
	resp, err = d.Call(ctx, h, "example/stream", map[string]int{"count": 3, "interval_ms": 20})
	if err != nil {
		return "", err
	}
	wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	_, err = h.WaitNotification(wctx, func(n fakehost.Notification) bool {
		return n.Method == "example/tick" && json.Valid(n.Params) && containsSeq(n.Params, 2)
	})
	cancel()
	d.Frames(h)
	if err := d.Expect(err == nil && resp.Error == nil, "3 example/tick notifications with id %s", resp.ID); err != nil {
		return "", err
	}

	d.Step("A slow request reports $/progress; $/ping is answered while it runs")
	slow := make(chan *fakehost.Response, 1)
	go func() {
		r, _ := h.Request(ctx, json.RawMessage(`"slow-1"`), "harness/slow", map[string]int{"ms": 300})
		slow <- r
	}()
	time.Sleep(30 * time.Millisecond)
	start := time.Now()
	if _, err := d.Call(ctx, h, "$/ping", nil); err != nil {
		return "", err
	}
	pingTook := time.Since(start)
	r := <-slow
	d.Frames(h)
	if err := d.Expect(r != nil && r.Error == nil, "ping answered in %v while harness/slow ran; slow finished after", pingTook.Round(time.Microsecond)); err != nil {
		return "", err
	}

	d.Step("$/cancelRequest: the host gives up on a request; it answers -32002 at once")
	go func() {
		r, _ := h.Request(ctx, json.RawMessage(`"slow-2"`), "harness/slow", map[string]int{"ms": 60000})
		slow <- r
	}()
	time.Sleep(30 * time.Millisecond)
	if err := h.Notify("$/cancelRequest", map[string]string{"id": "slow-2"}); err != nil {
		return "", err
	}
	r = <-slow
	d.Frames(h)
	if err := d.Expect(r != nil && r.Error != nil && r.Error.Code == -32002, "cancelled: %s", errText(r)); err != nil {
		return "", err
	}

	d.Step("Errors keep their code and say what is wrong (data.category)")
	for _, c := range []struct {
		method string
		params any
	}{
		{"example/nope", nil},
		{"example/echo", map[string]int{"message": 5}},
		{"example/fail", map[string]string{"category": "not_found", "message": "not found: TASK-7"}},
	} {
		resp, err := d.Call(ctx, h, c.method, c.params)
		if err != nil {
			return "", err
		}
		if err := d.Expect(resp.Error != nil && resp.Error.Category() != "", "%s → %s", c.method, errText(resp)); err != nil {
			return "", err
		}
	}

	d.Step("health/check: status, uptime and the real RSS")
	resp, err = d.Call(ctx, h, "health/check", nil)
	if err != nil {
		return "", err
	}
	if err := d.Expect(resp.Error == nil, "%s", resp.Result); err != nil {
		return "", err
	}

	d.Step("The daemon's shutdown ladder: shutdown, exit, 2 s grace, SIGKILL")
	rep, err := h.Shutdown(ctx, fakehost.LadderDaemon)
	d.Frames(h)
	if err != nil {
		return "", err
	}
	if err := d.Expect(rep.ExitedByItself && rep.ExitCode == 0, "exited by itself with code %d, %v after shutdown", rep.ExitCode, rep.Elapsed.Round(time.Millisecond)); err != nil {
		return "", err
	}
	return fmt.Sprintf("probe, handshake, echo, stream, progress, cancel, 3 errors, health, clean exit in %v", rep.Elapsed.Round(time.Millisecond)), nil
}

func containsSeq(params json.RawMessage, seq int) bool {
	var p struct {
		Seq int `json:"seq"`
	}
	return json.Unmarshal(params, &p) == nil && p.Seq == seq
}

func errText(r *fakehost.Response) string {
	if r == nil || r.Error == nil {
		return "no error"
	}
	return fmt.Sprintf("%d %s (%s)", r.Error.Code, r.Error.Message, r.Error.Category())
}

func shortJSON(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
