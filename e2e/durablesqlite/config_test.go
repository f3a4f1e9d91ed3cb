package durablesqlite

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

// TestConfigurationThroughDaemonEnv: the variables reach the plugin the
// only way the daemon lets them (declared in env_required, set in the
// daemon's environment) and change what they say they change.
func TestConfigurationThroughDaemonEnv(t *testing.T) {
	elsewhere := filepath.Join(t.TempDir(), "state", "steps.sqlite")
	tests := []struct {
		name  string
		env   map[string]string
		check func(t *testing.T, pr *project, p *proc, res *fakehost.InitializeResult)
	}{
		{
			name: "ANIMUS_DURABLE_DB_PATH moves the file",
			env:  map[string]string{"ANIMUS_DURABLE_DB_PATH": elsewhere},
			check: func(t *testing.T, pr *project, p *proc, _ *fakehost.InitializeResult) {
				p.beginRun("r", "p")
				if _, err := os.Stat(elsewhere); err != nil {
					t.Errorf("no database at the configured path: %v", err)
				}
				if _, err := os.Stat(filepath.Join(pr.dir, ".animus")); !os.IsNotExist(err) {
					t.Errorf("the default location was created too (%v)", err)
				}
			},
		},
		{
			name: "limits show in kind_capabilities and are enforced",
			env:  map[string]string{"ANIMUS_DURABLE_MAX_PAYLOAD_BYTES": "2048", "ANIMUS_DURABLE_RESERVATION_TTL_SECS": "90"},
			check: func(t *testing.T, pr *project, p *proc, res *fakehost.InitializeResult) {
				if got := string(res.KindCapabilities["durable_store"].Extra); got != `{"default_reservation_ttl_secs":90,"max_payload_bytes":2048,"supports_recovery":true}` {
					t.Errorf("extra %s", got)
				}
				p.beginRun("r", "p")
				var b beginResult
				p.must("durable/begin_step", stepParams("r", "p", "s", "k"), &b)
				big := json.RawMessage(`"` + strings.Repeat("x", 2100) + `"`)
				rpcErr, err := p.call("durable/commit_step", map[string]any{"step_id": b.StepID, "outcome": "success", "output": big}, nil)
				if err != nil || rpcErr == nil || rpcErr.Code != -32602 {
					t.Errorf("oversized output: %v %v, want -32602", rpcErr, err)
				}
				var again beginResult
				p.must("durable/begin_step", stepParams("r", "p", "s", "k"), &again)
				at, err := time.Parse(time.RFC3339Nano, again.ExpiresAt)
				if left := time.Until(at); err != nil || left < 60*time.Second || left > 91*time.Second {
					t.Errorf("reservation expires %s (%v from now), want about 90 s", again.ExpiresAt, left)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pr := newProject(t)
			o := pr.opts
			o.Env = tc.env
			h := fakehost.New(t, e2etest.Config(t, binary, o))
			res, err := h.Initialize(context.Background(), o.Handshake)
			if err != nil {
				t.Fatal(err)
			}
			p := &proc{t: t, h: h}
			tc.check(t, pr, p, res)
			p.shutdown()
		})
	}
}

// TestBadConfigurationFailsAtStart: a malformed value stops the process at
// once with exit 1 and a message naming the variable, instead of running
// with a silently different TTL; --manifest is unaffected.
func TestBadConfigurationFailsAtStart(t *testing.T) {
	pr := newProject(t)
	o := pr.opts
	o.Env = map[string]string{"ANIMUS_DURABLE_RESERVATION_TTL_SECS": "five minutes"}
	cfg := e2etest.Config(t, binary, o)
	h, err := fakehost.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	exited, code := h.Wait(10 * time.Second)
	if !exited || code != 1 {
		t.Fatalf("exited %v with code %d, want exit 1", exited, code)
	}
	if !strings.Contains(h.Stderr(), "ANIMUS_DURABLE_RESERVATION_TTL_SECS") {
		t.Fatalf("stderr does not name the variable: %s", h.Stderr())
	}
	allow := append(append([]string(nil), fakehost.AllowlistFull...), "ANIMUS_DURABLE_RESERVATION_TTL_SECS")
	if _, err := fakehost.Probe(context.Background(), cfg.Binary, fakehost.ProbeOptions{Env: cfg.Env, Allowlist: allow}); err != nil {
		t.Fatalf("--manifest with the bad value set: %v", err)
	}
}

// TestPhasesShareOneFile: two phases of one workflow run as two long-lived
// processes on one project, as the runner spawns them, interleaving their
// fences; each sees only its own steps, and both keep their commits.
func TestPhasesShareOneFile(t *testing.T) {
	pr := newProject(t)
	phases := map[string]*proc{"plan": pr.start(), "implement": pr.start()}
	for phase, p := range phases {
		p.beginRun("wf-9", phase)
	}
	for i := range 20 {
		for phase, p := range phases {
			key := "scope:wf-9:" + phase + ":" + string(rune('a'+i))
			var b beginResult
			p.must("durable/begin_step", stepParams("wf-9", phase, string(rune('a'+i)), key), &b)
			if b.Status != "new" {
				t.Fatalf("%s: %s", key, b.Status)
			}
			p.must("durable/commit_step", map[string]any{"step_id": b.StepID, "outcome": "success", "output": map[string]int{"i": i}}, nil)
		}
	}
	for phase, p := range phases {
		for other := range phases {
			steps := p.query("wf-9", other) // either process reads either phase
			if len(steps) != 20 {
				t.Fatalf("%s reading %s: %d steps", phase, other, len(steps))
			}
			for _, s := range steps {
				if !strings.HasPrefix(s.IdempotencyKey, "scope:wf-9:"+other+":") {
					t.Fatalf("%s's query_run holds %s", other, s.IdempotencyKey)
				}
			}
		}
		p.shutdown()
	}
}
