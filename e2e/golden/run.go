package golden

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
	script "github.com/animus-plugins/animus-plugins/pkg/golden"
)

// Run spawns binary the way the daemon does (scrubbed environment plus
// env_required and the script's env, overlaid with extra — a store of its
// own for a plugin not keyed by the project root —, cwd =
// vars["PROJECT_ROOT"], a fresh project), plays the script's client steps
// and returns the plugin's frames, normalised, one per line, followed by
// how the process ended. The host is returned for its wire log and
// stderr; the caller closes it.
func Run(ctx context.Context, binary string, vars script.Vars, extra map[string]string, sc *script.Script, schemas *schemacheck.Set) ([]byte, *fakehost.Host, error) {
	env := sc.ExpandedEnv(vars)
	if len(extra) > 0 {
		merged := make(map[string]string, len(env)+len(extra))
		for k, v := range env {
			merged[k] = v
		}
		for k, v := range extra {
			merged[k] = v
		}
		env = merged
	}
	manifest, err := fakehost.Probe(ctx, binary, fakehost.ProbeOptions{Env: env})
	if err != nil {
		return nil, nil, fmt.Errorf("manifest probe: %w", err)
	}
	h, err := fakehost.Start(ctx, fakehost.Config{
		Binary: binary, Dir: vars["PROJECT_ROOT"], EnvMode: fakehost.EnvDaemon, Env: env,
		Declared: nonNil(manifest.EnvNames()), Schemas: schemas,
	})
	if err != nil {
		return nil, nil, err
	}
	out, err := script.Play(ctx, hostConn{h}, vars, manifest.Version, sc)
	return out, h, err
}

// hostConn is the player's Conn over a spawned binary.
type hostConn struct{ h *fakehost.Host }

func (c hostConn) Send(frame []byte) error { return c.h.Send(frame) }

func (c hostConn) Await(ctx context.Context, id json.RawMessage) (json.RawMessage, error) {
	resp, err := c.h.Await(ctx, id)
	if err != nil {
		return nil, err
	}
	return resp.Result, nil
}

// WaitNotifications relies on WaitNotification offering each notification
// to match once, in order: counting inside match finds the n-th.
func (c hostConn) WaitNotifications(ctx context.Context, method string, n int) error {
	seen := 0
	_, err := c.h.WaitNotification(ctx, func(note fakehost.Notification) bool {
		if note.Method == method {
			seen++
		}
		return seen >= n
	})
	return err
}

// Frames are the plugin's lines of the wire log ("… << frame").
func (c hostConn) Frames(from int) ([][]byte, int) {
	lines, next := c.h.WireLines(from)
	var frames [][]byte
	for _, l := range lines {
		if _, frame, ok := strings.Cut(l, " << "); ok {
			frames = append(frames, []byte(frame))
		}
	}
	return frames, next
}

func (c hostConn) Wait(d time.Duration) (bool, int) {
	if d <= 0 {
		return c.h.Exited()
	}
	return c.h.Wait(d)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
