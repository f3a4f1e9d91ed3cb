package queuepostgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
	"github.com/animus-plugins/animus-plugins/e2e/internal/queuev2"
)

// The several-hosts and fault tests play several Animus 0.7 daemons, each
// on its own machine (its own project root), sharing one PostgreSQL
// namespace. Every queue call is a fresh plugin process, as the daemon's
// per-call process model has it: spawn, initialize with the 0.7 queue
// client's handshake (project_binding = that host's root), initialized,
// one method, shutdown, exit. Nothing here touches a test from a
// goroutine: failures come back as errors carrying the call's wire log and
// stderr, and the test prints them.

// codeRetry is -32205: the database could not be reached or the queue
// lock not taken in time; the caller may retry.
const codeRetry = -32205

// perCallBudget bounds one per-call process from spawn to exit: the plugin's
// connect and lock timeouts are 5 s each and pgkit retries within its
// operation timeout, so a call that takes this long hangs.
const perCallBudget = 45 * time.Second

// nsLockClass is pgstore's namespace advisory lock class ("QUEU"); the
// second key is hashtext(schema).
const nsLockClass = 0x51554555

// fleet is the plugin configuration the simulated daemons share: one DSN
// and schema, different project roots.
type fleet struct {
	t    *testing.T
	q    pgns.NS
	base fakehost.Config // Dir is set per host
	// procs counts the plugin processes started, for the logged numbers.
	procs atomic.Int64
}

// newFleet prepares the plugin's spawn configuration for q with the extra
// environment (NAME → value) on top of the namespace's DSN and schema; dsn, when
// not "", replaces q's DSN (a proxy in front of the server).
func newFleet(t *testing.T, q pgns.NS, dsn string, extra map[string]string) *fleet {
	t.Helper()
	env := map[string]string{}
	for _, kv := range q.Env() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if dsn != "" {
		env["ANIMUS_QUEUE_PG_DSN"] = dsn
	}
	for k, v := range extra {
		env[k] = v
	}
	cfg := e2etest.Config(t, pgns.Queue.Binary, e2etest.Options{EnvMode: fakehost.EnvDaemonNarrow, Env: env,
		Declared: e2etest.Declared(t, pgns.Queue.Binary), Daemon: fakehost.Daemon07})
	return &fleet{t: t, q: q, base: cfg}
}

// callError is a per-call process that failed outside the JSON-RPC
// answer (spawn, handshake, no reply, unclean exit, protocol violation),
// with its transcript.
type callError struct {
	what       string
	err        error
	transcript string
}

func (e *callError) Error() string {
	return fmt.Sprintf("%s: %v\n%s", e.what, e.err, e.transcript)
}

// transcript is a closed process's wire log and stderr, for failure
// messages.
func callTranscript(h *fakehost.Host) string {
	return "--- wire log ---\n" + h.WireLog() + "--- plugin stderr ---\n" + h.Stderr()
}

// call is one daemon queue call in its own process on the host whose
// project root is dir. It returns the response (whose Error may be set)
// and a transcript function; err is a *callError.
func (f *fleet) call(ctx context.Context, dir, method string, params any) (*fakehost.Response, func() string, error) {
	f.procs.Add(1)
	cfg := f.base
	cfg.Dir = dir
	ctx, cancel := context.WithTimeout(ctx, perCallBudget)
	defer cancel()
	h, err := fakehost.Start(ctx, cfg)
	if err != nil {
		return nil, nil, &callError{what: method + ": spawn", err: err}
	}
	defer h.Close()
	trans := func() string { return callTranscript(h) }
	fail := func(what string, err error) (*fakehost.Response, func() string, error) {
		h.Close()
		return nil, trans, &callError{what: method + ": " + what, err: err, transcript: trans()}
	}
	res, err := h.Initialize(ctx, fakehost.Handshake{Preset: fakehost.PresetQueueClient})
	if err != nil {
		return fail("initialize", err)
	}
	if _, err := conformance.RequireGenerationFencedQueue(res); err != nil {
		return fail("0.7 queue gate", err)
	}
	resp, err := h.Call(ctx, method, params)
	if err != nil {
		return fail("call (no answer within the call budget: a hang?)", err)
	}
	rep, err := h.Shutdown(context.WithoutCancel(ctx), fakehost.LadderDaemon)
	if err != nil || !rep.ExitedByItself || rep.ExitCode != 0 {
		return fail("shutdown", fmt.Errorf("report %+v, err %v; want an exit by itself with code 0", rep, err))
	}
	h.Close()
	if v := h.Violations(); len(v) > 0 {
		return fail("protocol", fmt.Errorf("%d violation(s): %s", len(v), strings.Join(v, "; ")))
	}
	return resp, trans, nil
}

// strict is call with the answer decoded strictly into v (the daemon's v2
// types deny unknown fields). A JSON-RPC error comes back as rpcErr.
func (f *fleet) strict(ctx context.Context, dir, method string, params, v any) (rpcErr *fakehost.RPCError, trans func() string, err error) {
	resp, trans, err := f.call(ctx, dir, method, params)
	if err != nil {
		return nil, trans, err
	}
	if resp.Error != nil {
		return resp.Error, trans, nil
	}
	if err := queuev2.DecodeStrict(resp.Result, v); err != nil {
		return nil, trans, fmt.Errorf("%s: %w\n%s", method, err, trans())
	}
	return nil, trans, nil
}

// daemonHost is one simulated daemon: its machine's project root and its
// owner id.
type daemonHost struct {
	f     *fleet
	name  string
	dir   string
	owner string
}

// hosts makes n daemons, each with a project root of its own.
func (f *fleet) hosts(n int) []*daemonHost {
	out := make([]*daemonHost, n)
	for i := range out {
		out[i] = &daemonHost{f: f, name: fmt.Sprintf("host-%d", i), dir: e2etest.Project(f.t), owner: "daemon-" + queuev2.NewUUID()}
	}
	return out
}

// v2EnqueueParams is the 0.7 CLI's v2 enqueue of task subject id.
func v2EnqueueParams(id, key string) map[string]any {
	return map[string]any{"idempotency_key": key, "subject_dispatch": map[string]any{
		"requested_at": "2026-12-03T09:00:00Z", "subject": map[string]any{"Task": map[string]any{"id": id}},
		"trigger_source": "manual-queue-enqueue", "workflow_ref": "standard"}}
}

// seed enqueues n entries (subjects task:<prefix>-0 …, distinct so that
// subject exclusivity never serialises the drain) through queue/v2/enqueue,
// in batches of up to 250 per long-lived process, three processes at a
// time with four requests in flight each, and returns the entry ids and
// their subjects. Setup only: the drain is what runs per call.
func (f *fleet) seed(ctx context.Context, dir, prefix string, n int) ([]string, map[string]queuev2.SubjectGeneration, error) {
	const batch, procs, inFlight = 250, 3, 4
	ids := make([]string, n)
	subjects := make([]queuev2.SubjectGeneration, n)
	batches := (n + batch - 1) / batch
	err := hostsFanOut(batches, procs, func(b int) error {
		cfg := f.base
		cfg.Dir = dir
		f.procs.Add(1)
		h, err := fakehost.Start(ctx, cfg)
		if err != nil {
			return err
		}
		defer h.Close()
		ictx, cancel := context.WithTimeout(ctx, perCallBudget)
		defer cancel()
		if _, err := h.Initialize(ictx, fakehost.Handshake{Preset: fakehost.PresetQueueClient}); err != nil {
			return fmt.Errorf("seed batch %d: initialize: %v\n%s", b, err, callTranscript(h))
		}
		lo, hi := b*batch, min(n, (b+1)*batch)
		err = hostsFanOut(hi-lo, inFlight, func(k int) error {
			i := lo + k
			cctx, cancel := context.WithTimeout(ctx, perCallBudget)
			defer cancel()
			resp, err := h.Call(cctx, "queue/v2/enqueue", v2EnqueueParams(fmt.Sprintf("%s-%d", prefix, i), fmt.Sprintf("%s-key-%d", prefix, i)))
			if err != nil {
				return fmt.Errorf("enqueue %d: %w", i, err)
			}
			if resp.Error != nil {
				return fmt.Errorf("enqueue %d: error %d %s", i, resp.Error.Code, resp.Error.Message)
			}
			var r queuev2.EnqueueResponse
			if err := queuev2.DecodeStrict(resp.Result, &r); err != nil {
				return err
			}
			want := queuev2.SubjectGeneration{QualifiedID: fmt.Sprintf("task:%s-%d", prefix, i), Generation: 1}
			if !r.Enqueued || r.EntryID == "" || r.Subject != want || r.Warning != nil {
				return fmt.Errorf("enqueue %d: %s, want a new entry for %+v", i, r, want)
			}
			ids[i], subjects[i] = r.EntryID, r.Subject
			return nil
		})
		if err != nil {
			return fmt.Errorf("seed batch %d: %w\n%s", b, err, callTranscript(h))
		}
		rep, err := h.Shutdown(context.WithoutCancel(ctx), fakehost.LadderDaemon)
		if err != nil || !rep.ExitedByItself || rep.ExitCode != 0 {
			return fmt.Errorf("seed batch %d: shutdown %+v %v", b, rep, err)
		}
		if v := h.Violations(); len(v) > 0 {
			return fmt.Errorf("seed batch %d: violations %v", b, v)
		}
		return nil
	})
	bySubject := make(map[string]queuev2.SubjectGeneration, n)
	for i, id := range ids {
		bySubject[id] = subjects[i]
	}
	return ids, bySubject, err
}

// hostsFanOut runs fn(i) for i in [0, n) on lanes goroutines and returns every
// error, joined.
func hostsFanOut(n, lanes int, fn func(i int) error) error {
	var next atomic.Int64
	errs := make([]error, n)
	var wg sync.WaitGroup
	for range lanes {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				errs[i] = fn(i)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
