package bench

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
)

// The per-call process model of the 0.7 daemon for animus-queue-sqlite's
// generation-fenced surface (issue 15): every call is a fresh process,
// the per-kind handshake, one method, shutdown, exit (queue-v2.md §4.1).
// Shared by the v2 cycle and lease-depth benchmarks.

// initParams07 is the 0.7 daemon's per-kind initialize for a queue, as
// fakehost.Daemon07 sends it: protocol 1.1.0, host 0.7.0-rc.52, all three
// capabilities, project_binding and the memory MCP command, keys sorted
// (the daemon serialises through a JSON value).
func initParams07(dir string) string {
	return `{"capabilities":{"cancellation":true,"progress":true,"streaming":true},"host_info":{"name":"animus","version":"0.7.0-rc.52"},` +
		`"init_extensions":{"memory_mcp_stdio_command":{"command":"/usr/local/bin/animus"},` +
		`"project_binding":{"project_root":"` + dir + `","repo_scope":"bench"}},"protocol_version":"1.1.0"}`
}

// v2Methods are the six methods the daemon's require_generation_fenced_queue
// looks for in capabilities.methods.
var v2Methods = []string{
	"queue/v2/enqueue", "queue/v2/lease", "queue/v2/lease/renew",
	"queue/v2/lease/recover", "queue/v2/completion", "queue/v2/release_pending",
}

// spawnQueue07 starts the plugin as the 0.7 daemon does and checks the
// gate on the initialize result before any v2 call, as the daemon does. A
// binary without the v2 surface fails the benchmark here, by name, instead
// of timing -32601 answers as if they were work.
func spawnQueue07(tb testing.TB, dir string) *child {
	tb.Helper()
	c := start(tb, binaries.Path(tb, queueBinary), dir)
	if problem := v2GateProblem(c.roundTrip(tb, "initialize", initParams07(dir))); problem != "" {
		c.stop()
		tb.Fatalf("%s does not serve queue/v2 (%s): build the v2 plugin into $%s (go build -o $%[3]s/%[1]s ./plugins/queue-sqlite)",
			queueBinary, problem, binaries.EnvBinDir)
	}
	c.send(tb, `{"jsonrpc":"2.0","method":"initialized"}`)
	return c
}

// v2GateProblem is what the daemon's gate would refuse in an initialize
// response, or "" when it passes.
func v2GateProblem(resp []byte) string {
	var r struct {
		Result *struct {
			Capabilities struct {
				Methods []string `json:"methods"`
			} `json:"capabilities"`
			KindCapabilities struct {
				Queue struct {
					Extra struct {
						Fenced   bool `json:"generation_fenced_leases_v1"`
						MaxBatch uint `json:"max_lease_batch"`
					} `json:"extra"`
				} `json:"queue"`
			} `json:"kind_capabilities"`
		} `json:"result"`
	}
	if err := json.Unmarshal(resp, &r); err != nil || r.Result == nil {
		return fmt.Sprintf("initialize answered %.300s", resp)
	}
	var missing []string
	for _, m := range v2Methods {
		if !slices.Contains(r.Result.Capabilities.Methods, m) {
			missing = append(missing, m)
		}
	}
	switch extra := r.Result.KindCapabilities.Queue.Extra; {
	case len(missing) > 0:
		return "capabilities.methods lacks " + strings.Join(missing, ", ")
	case !extra.Fenced:
		return "kind_capabilities.queue.extra.generation_fenced_leases_v1 is not true"
	case extra.MaxBatch < 5:
		return fmt.Sprintf("max_lease_batch %d < 5", extra.MaxBatch)
	}
	return ""
}

// callOnce is one daemon call in the per-call process model through
// spawn (spawnQueue07 for the 0.7 daemon, spawnQueue for 0.6). The
// duration covers the whole exchange, process start to reaped exit: that
// is what the daemon waits for per call.
func callOnce(tb testing.TB, spawn func(testing.TB, string) *child, dir, method, params string) ([]byte, time.Duration) {
	tb.Helper()
	t0 := time.Now()
	c := spawn(tb, dir)
	res := mustResult(tb, c.roundTrip(tb, method, params))
	c.shutdown(tb)
	return res, time.Since(t0)
}

const benchOwner = "bench-daemon-0001"

// enqueueV2Params is a CLI-style add of TASK-<n>: the repository the
// daemon derives from the subject (default head ref), and, when key is
// set, an idempotency key as triggers send one.
func enqueueV2Params(n int, key bool) string {
	idem := ""
	if key {
		idem = fmt.Sprintf(`"idempotency_key":"bench-%d",`, n)
	}
	return fmt.Sprintf(`{%s"repository":{"base_ref":"refs/heads/main","head_ref":"refs/heads/animus/TASK-%d","repository":"https://github.com/acme/app.git"},`+
		`"subject_dispatch":{"requested_at":"2026-06-14T12:00:00Z","subject":{"Task":{"id":"TASK-%d"}},"trigger_source":"bench","workflow_ref":"standard"}}`,
		idem, n, n)
}

// leaseV2Params asks for up to batch entries with fresh workflow ids, as a
// dispatch tick does (no exclude: nothing is running locally).
func leaseV2Params(batch int, tag string) string {
	ids := make([]string, batch)
	for i := range ids {
		ids[i] = fmt.Sprintf(`"wf-%s-%d"`, tag, i)
	}
	return fmt.Sprintf(`{"max":%d,"owner_id":"%s","workflow_ids":[%s]}`, batch, benchOwner, strings.Join(ids, ","))
}

// leasedV2 is the part of a QueueLeaseV2Response the benchmarks use: each
// fence is kept raw, to be sent back byte for byte as the daemon does.
type leasedV2 struct {
	Leased []struct {
		Entry struct {
			EntryID string `json:"entry_id"`
		} `json:"entry"`
		Execution json.RawMessage `json:"execution"`
	} `json:"leased"`
}

func mustLeased(tb testing.TB, res []byte, want int) leasedV2 {
	tb.Helper()
	var l leasedV2
	if err := json.Unmarshal(res, &l); err != nil || len(l.Leased) != want {
		tb.Fatalf("queue/v2/lease handed out %d entries, want %d: %.500s", len(l.Leased), want, res)
	}
	return l
}

// mustOutcome checks a QueueLeaseMutationResponse and returns its fence
// (nil when the outcome carries none).
func mustOutcome(tb testing.TB, method string, res []byte, want string) json.RawMessage {
	tb.Helper()
	var m struct {
		Outcome   string          `json:"outcome"`
		Execution json.RawMessage `json:"execution"`
	}
	if err := json.Unmarshal(res, &m); err != nil || m.Outcome != want {
		tb.Fatalf("%s: outcome %q, want %q: %.500s", method, m.Outcome, want, res)
	}
	return m.Execution
}

func fenceParams(fence json.RawMessage, extra string) string {
	return `{"execution":` + string(fence) + extra + `}`
}
