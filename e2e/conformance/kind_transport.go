package conformance

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// transportScenarios ports the testkit's transport suite (transport-http.md
// §4) and adds the checks §4 lists as "not tested" that §2 and §7 make
// unambiguous: port 0, bound_addr accuracy, address in use, releasing the
// port on transport/shutdown, and the TransportSchema shape.
func transportScenarios() []Scenario {
	return []Scenario{
		{"transport", "handshake", scenarioKindHandshake("transport_backend")},
		{"transport", "start-shutdown", scenarioStartShutdown},
		{"transport", "schema-health", scenarioTransportSchemaHealth},
		{"transport", "serve-and-accept", scenarioServeAndAccept},
		// Beyond the testkit.
		{"transport", "bound-addr-accurate", scenarioBoundAddr},
		{"transport", "address-in-use", scenarioAddressInUse},
		{"transport", "shutdown-releases-port", scenarioShutdownReleasesPort},
		{"transport", "schema-shape", scenarioTransportSchemaShape},
	}
}

// startParams is the testkit's TransportConfig: a control socket path in a
// fresh temp dir that does not exist (the transport must not dial it during
// start), that dir as project_root, and bind_addr 127.0.0.1:<port>.
// The session removes the dir.
func startParams(s *Session, bindAddr string) (params map[string]string, err error) {
	dir, err := s.TempDir()
	if err != nil {
		return nil, err
	}
	return map[string]string{
		"control_socket_path": filepath.Join(dir, "control.sock"),
		"project_root":        dir,
		"bind_addr":           bindAddr,
	}, nil
}

func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// scenarioStartShutdown (transport-http.md §4): after the handshake,
// transport/start on a free port (5 s) must succeed, result shape not
// checked; transport/shutdown {} (3 s) follows and its outcome is only
// logged.
func scenarioStartShutdown(ctx context.Context, s *Session) Outcome {
	h, _, err := testkitSpawn(ctx, s)
	if err != nil {
		return failf("%v", err)
	}
	port, err := freePort()
	if err != nil {
		return failf("%v", err)
	}
	params, err := startParams(s, loopback(port))
	if err != nil {
		return failf("%v", err)
	}
	if _, err := testkitCall(ctx, h, transportStartTTL, "transport/start", params); err != nil {
		return failf("transport/start: %v", err)
	}
	_, _ = testkitCall(ctx, h, shortCallBudget, "transport/shutdown", json.RawMessage(`{}`))
	return pass()
}

// scenarioTransportSchemaHealth (transport-http.md §4): without starting,
// transport/schema {} and then health/check {} (3 s each) must both succeed.
func scenarioTransportSchemaHealth(ctx context.Context, s *Session) Outcome {
	h, _, err := testkitSpawn(ctx, s)
	if err != nil {
		return failf("%v", err)
	}
	for _, m := range []string{"transport/schema", "health/check"} {
		if _, err := testkitCall(ctx, h, shortCallBudget, m, json.RawMessage(`{}`)); err != nil {
			return failf("%s: %v", m, err)
		}
	}
	return pass()
}

// scenarioServeAndAccept (transport-http.md §4): pick a free port, spawn,
// start on it; 75 ms after the result a TCP connect to 127.0.0.1:<port> must
// succeed. transport/shutdown follows, result ignored.
func scenarioServeAndAccept(ctx context.Context, s *Session) Outcome {
	port, err := freePort()
	if err != nil {
		return failf("%v", err)
	}
	params, err := startParams(s, loopback(port))
	if err != nil {
		return failf("%v", err)
	}
	h, _, err := testkitSpawn(ctx, s)
	if err != nil {
		return failf("%v", err)
	}
	defer func() { _, _ = testkitCall(ctx, h, shortCallBudget, "transport/shutdown", json.RawMessage(`{}`)) }()
	if _, err := testkitCall(ctx, h, transportStartTTL, "transport/start", params); err != nil {
		return failf("transport/start: %v", err)
	}
	time.Sleep(75 * time.Millisecond)
	conn, err := net.DialTimeout("tcp", loopback(port), 2*time.Second)
	if err != nil {
		return failf("dial %s: %v", loopback(port), err)
	}
	conn.Close()
	return pass()
}

// transportInfo is TransportInfo (transport-http.md §2.1).
type transportInfo struct {
	BoundAddr string `json:"bound_addr"`
	StartedAt string `json:"started_at"`
}

// startDaemonStyle spawns with the daemon's handshake (transports are hosted
// by the generic PluginHost, §2.2) and sends transport/start for bindAddr.
func startDaemonStyle(ctx context.Context, s *Session, bindAddr string) (*fakehost.Host, *fakehost.Response, Outcome, bool) {
	h, out, ok := ready(ctx, s)
	if !ok {
		return nil, nil, out, false
	}
	params, err := startParams(s, bindAddr)
	if err != nil {
		return nil, nil, failf("%v", err), false
	}
	resp, err := call(ctx, h, transportStartTTL, "transport/start", params)
	if err != nil {
		return nil, nil, failf("%v", err), false
	}
	return h, resp, Outcome{}, true
}

// scenarioBoundAddr (transport-http.md §2.1 TransportInfo, §7 item 1):
// started with port 0, the result is a valid TransportInfo whose bound_addr
// has the real port (not 0) and accepts TCP, and whose started_at is
// RFC 3339.
func scenarioBoundAddr(ctx context.Context, s *Session) Outcome {
	h, resp, out, ok := startDaemonStyle(ctx, s, "127.0.0.1:0")
	if !ok {
		return out
	}
	var info transportInfo
	if err := wantResult(resp, &info); err != nil {
		return failf("%v", err)
	}
	if err := s.Schemas.Validate(schemacheck.TransportProtocol, "TransportInfo", resp.Result); err != nil {
		return failf("transport/start result is not a valid TransportInfo: %v", err)
	}
	if _, err := time.Parse(time.RFC3339Nano, info.StartedAt); err != nil {
		return failf("started_at %q is not RFC 3339: %v", info.StartedAt, err)
	}
	_, portText, err := net.SplitHostPort(info.BoundAddr)
	if err != nil {
		return failf("bound_addr %q is not host:port: %v", info.BoundAddr, err)
	}
	if port, err := strconv.Atoi(portText); err != nil || port <= 0 {
		return failf("bound_addr %q does not name the port the OS chose for port 0", info.BoundAddr)
	}
	conn, err := net.DialTimeout("tcp", info.BoundAddr, 2*time.Second)
	if err != nil {
		return failf("bound_addr %s does not accept TCP: %v", info.BoundAddr, err)
	}
	conn.Close()
	_, _ = call(ctx, h, shortCallBudget, "transport/shutdown", nil)
	return pass()
}

// scenarioAddressInUse (transport-http.md §2.1 Errors, §3.1, §7 item 1; spec
// §13.4): start on an address someone else holds fails with -32603 and
// data.category "address_in_use".
func scenarioAddressInUse(ctx context.Context, s *Session) Outcome {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return failf("cannot hold a port to test with: %v", err)
	}
	defer ln.Close()
	_, resp, out, ok := startDaemonStyle(ctx, s, ln.Addr().String())
	if !ok {
		return out
	}
	if err := wantError(resp, -32603, "address_in_use"); err != nil {
		return failf("transport/start on %s, which is in use: %v", ln.Addr(), err)
	}
	return pass()
}

// scenarioShutdownReleasesPort (transport-http.md §2.1 "release the address,
// safe to call more than once", §2.3 "stop the listener before answering
// transport/shutdown; make repeated calls no-ops"): once transport/shutdown
// (without params, as the daemon sends it) is answered, the port can be
// bound again at once, and a second transport/shutdown succeeds.
func scenarioShutdownReleasesPort(ctx context.Context, s *Session) Outcome {
	port, err := freePort()
	if err != nil {
		return failf("%v", err)
	}
	h, resp, out, ok := startDaemonStyle(ctx, s, loopback(port))
	if !ok {
		return out
	}
	if err := wantResult(resp, nil); err != nil {
		return failf("%v", err)
	}
	for i := 1; i <= 2; i++ {
		resp, err := call(ctx, h, fakehost.TransportShutdownTimeout, "transport/shutdown", nil)
		if err != nil {
			return failf("transport/shutdown #%d: %v", i, err)
		}
		if err := wantResult(resp, nil); err != nil {
			return failf("transport/shutdown #%d: %v", i, err)
		}
		if i == 1 {
			ln, err := net.Listen("tcp", loopback(port))
			if err != nil {
				return failf("port %d still held after transport/shutdown answered: %v", port, err)
			}
			ln.Close()
		}
	}
	return pass()
}

// scenarioTransportSchemaShape (transport-http.md §2.1 TransportSchema):
// transport/schema answers a valid TransportSchema before any start.
func scenarioTransportSchemaShape(ctx context.Context, s *Session) Outcome {
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	resp, err := call(ctx, h, shortCallBudget, "transport/schema", nil)
	if err != nil {
		return failf("%v", err)
	}
	if err := wantResult(resp, nil); err != nil {
		return failf("%v", err)
	}
	if err := s.Schemas.Validate(schemacheck.TransportProtocol, "TransportSchema", resp.Result); err != nil {
		return failf("transport/schema result is not a valid TransportSchema: %v", err)
	}
	return pass()
}
