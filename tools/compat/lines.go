package compat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// measuredLines are the daemon lines every binary is measured under, in
// the order of the matrix's columns: the fake host reproduces each line's
// handshakes byte for byte (fakehost.Daemon06, Daemon07).
var measuredLines = []struct {
	line   string // DaemonLine.Line
	daemon fakehost.Daemon
}{
	{line06, fakehost.Daemon06},
	{line07, fakehost.Daemon07},
}

// LineRun is what one daemon line measured of a binary: the handshake of
// the caller that spawns its kind, the line's gates on that reply, and the
// conformance run with every scenario's processes spawned under the line.
type LineRun struct {
	Line   string // DaemonLine.Line
	Daemon fakehost.Daemon
	// Sent is the initialize the caller sent, read back from the wire
	// (protocol, host, init_extensions keys), so the matrix shows what was
	// measured rather than what was meant.
	Sent string
	// Accepted is whether the plugin completed that handshake; Reply is
	// what it answered ("protocol_version 1.1.0") or why it refused.
	Accepted bool
	Reply    string
	Gates    []GateResult
	// Conformance is nil when the run did not happen; NotRun says why (a
	// refused handshake or gate: the daemon would not use the plugin).
	Conformance *Conformance
	NotRun      string
}

// Refused returns the first gate refusal, or "".
func (lr *LineRun) Refused() string {
	for _, g := range lr.Gates {
		if g.Refusal != "" {
			return g.Refusal
		}
	}
	return ""
}

// measureLines runs the line's handshake in a fresh process, evaluates the
// line's gates on the reply, then the conformance scenarios that line's
// daemon would exercise: the queue-v2 suite only under 0.7 and only for a
// queue its gate accepts (the 0.6 daemon never calls queue/v2/*).
func measureLines(ctx context.Context, p Plugin, bin string, env map[string]string, schemas *schemacheck.Set, man *fakehost.Manifest, log io.Writer) ([]LineRun, error) {
	target, err := conformance.Prepare(ctx, bin, "", schemas, env)
	if err != nil {
		return nil, fmt.Errorf("conformance prepare: %w", err)
	}
	var runs []LineRun
	for _, ml := range measuredLines {
		lr := LineRun{Line: ml.line, Daemon: ml.daemon}
		err := withHost(ctx, bin, env, schemas, man, ml.daemon, func(h *fakehost.Host) error {
			res, err := h.Initialize(ctx, ml.daemon.Handshake(p.Kind))
			lr.Sent = sentHandshake(h.WireLog())
			switch {
			case err == nil:
				lr.Accepted, lr.Reply = true, "protocol_version "+res.ProtocolVersion
				for _, g := range Gates(ml.line, p.Kind) {
					lr.Gates = append(lr.Gates, evaluate(g, res))
				}
			case errors.Is(err, fakehost.ErrHandshake):
				lr.Reply = strings.TrimPrefix(err.Error(), fakehost.ErrHandshake.Error()+": ")
			default:
				return fmt.Errorf("initialize as the %s daemon: %w", ml.daemon, err)
			}
			_, err = h.Shutdown(ctx, p.Ladder)
			return err
		})
		if err != nil {
			return nil, err
		}
		switch {
		case !lr.Accepted:
			lr.NotRun = "the handshake was refused"
		case lr.Refused() != "":
			lr.NotRun = "the daemon refuses to use the plugin (gate)"
		default:
			v2 := ml.line == line07 && p.Kind == "queue"
			stores := conformance.Options{Unreachable: p.Unreachable}
			if p.Isolate != nil {
				stores.Isolate = p.Isolate(env)
			}
			if lr.Conformance, err = runConformance(ctx, target, scenariosUnder(target, v2), ml.daemon, stores, log); err != nil {
				return nil, err
			}
		}
		runs = append(runs, lr)
	}
	return runs, nil
}

// scenariosUnder is what the runner selects for the target, with the
// queue-v2 suite exactly when v2 asks for it: the runner adds it whenever
// the generic handshake's reply passes the gate, whichever line runs.
func scenariosUnder(t *conformance.Target, v2 bool) []conformance.Scenario {
	var out []conformance.Scenario
	for _, sc := range conformance.ScenariosFor(t) {
		if sc.Suite != "queue-v2" {
			out = append(out, sc)
		}
	}
	if v2 {
		out = append(out, conformance.QueueV2Suite()...)
	}
	return out
}

// sentHandshake describes the first initialize request in a wire log:
// its protocol_version, host_info and the keys of init_extensions (their
// values hold temporary paths).
func sentHandshake(wire string) string {
	for _, line := range strings.Split(wire, "\n") {
		i := strings.IndexByte(line, '{')
		if i < 0 || !strings.Contains(line, `"method":"initialize"`) {
			continue
		}
		var f struct {
			Params struct {
				ProtocolVersion string `json:"protocol_version"`
				HostInfo        struct {
					Name    string `json:"name"`
					Version string `json:"version"`
				} `json:"host_info"`
				InitExtensions map[string]json.RawMessage `json:"init_extensions"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(line[i:]), &f); err != nil {
			return "unreadable initialize frame"
		}
		ext := "no `init_extensions`"
		if len(f.Params.InitExtensions) > 0 {
			ext = "`init_extensions` " + codeList(sortedKeys(f.Params.InitExtensions))
		}
		return fmt.Sprintf("protocol `%s`, host `%s %s`, %s", f.Params.ProtocolVersion, f.Params.HostInfo.Name, f.Params.HostInfo.Version, ext)
	}
	return "no initialize frame"
}
