package notifier

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/delivery"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/store"
)

// Flush handles notifier/flush: for each project (the one named, or every
// project in the outbox plus the bound one), claim up to that project's
// max_deliveries_per_tick due rows and send them, at most max_concurrency
// at a time per connector, all within the flush budget. Rows not started
// in time go back untouched.
func (s *Service) Flush(ctx context.Context, p FlushParams) (FlushResult, error) {
	st, err := s.outbox()
	if err != nil {
		return FlushResult{}, err
	}
	// Budgets run on the wall clock (they bound real waiting); s.now is
	// the clock of persisted times.
	deadline := time.Now().Add(s.flushBudget)
	var projects []string
	if p.ProjectRoot != nil && *p.ProjectRoot != "" {
		projects = []string{*p.ProjectRoot}
	} else {
		if projects, err = st.Projects(ctx); err != nil {
			s.noteError("the outbox could not list its projects")
			return FlushResult{}, errUnavailable(err)
		}
	}
	var evs events
	for _, project := range projects {
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			break
		}
		cfg, err := s.loader.Load(project)
		if err != nil {
			// A broken configuration holds the rows back; they are not
			// dead-lettered for an operator's typo.
			s.noteError(err.Error())
			s.log.Warn("flush skipped a project: invalid notification configuration", "error", err.Error())
			continue
		}
		limit := config.DefaultMaxPerTick
		if cfg != nil {
			limit = cfg.MaxDeliveriesPerTick
		}
		rows, err := st.Claim(ctx, project, limit)
		if err != nil {
			s.noteError("the outbox could not claim due deliveries")
			return FlushResult{LifecycleEvents: evs.list()}, errUnavailable(err)
		}
		_, more := s.sendAll(ctx, st, cfg, rows, deadline)
		evs = append(evs, more...)
	}
	s.maybePrune(ctx, st)
	return FlushResult{LifecycleEvents: evs.list()}, nil
}

// sendAll sends claimed rows concurrently (bounded per connector) until
// deadline, records every outcome, and hands unstarted rows back. It
// returns the number delivered and the lifecycle events, in row order.
func (s *Service) sendAll(ctx context.Context, st *store.Store, cfg *config.Config, rows []*store.Delivery, deadline time.Time) (int, events) {
	if len(rows) == 0 {
		return 0, nil
	}
	return s.finish(st, s.startSends(ctx, cfg, rows, deadline), false)
}

// sends is a set of attempts under way: startSends launches them, finish
// waits for them and records their outcomes.
type sends struct {
	ctx    context.Context // bounded by the deadline
	cancel context.CancelFunc
	cfg    *config.Config
	rows   []*store.Delivery
	// done carries each row's index once its attempt ended; results[i]
	// is written before and read after.
	results []attemptResult
	done    chan int
}

// startSends launches one attempt per row, each on its own goroutine.
func (s *Service) startSends(ctx context.Context, cfg *config.Config, rows []*store.Delivery, deadline time.Time) *sends {
	sn := &sends{cfg: cfg, rows: rows, results: make([]attemptResult, len(rows)), done: make(chan int, len(rows))}
	sn.ctx, sn.cancel = context.WithDeadline(ctx, deadline)
	s.learnSecrets(secretNames(cfg)...)
	for i := range rows {
		go func() {
			var conn *config.Connector
			if cfg != nil {
				conn = cfg.Connector(rows[i].ConnectorID)
			}
			sn.results[i].res, sn.results[i].started = s.attempt(sn.ctx, rows[i], conn)
			sn.done <- i
		}()
	}
	return sn
}

// finish waits for the attempts of sn, records every outcome and hands
// unstarted rows back. It returns the number delivered and the lifecycle
// events, in row order. With async, outcomes that are all successes are
// recorded after finish returns (see recordLater).
//
// Outcomes are recorded in batches of up to recordBatch, one transaction
// each, an outcome waiting at most recordWait for others to join it: each
// send's goroutine committing its own outcome had up to max_concurrency
// writers queue on SQLite's write lock, whose busy handler sleeps a
// millisecond or more per retry, and wrote the same table and index pages
// to the WAL once per row (most of a flush of 128 went there).
func (s *Service) finish(st *store.Store, sn *sends, async bool) (int, events) {
	defer sn.cancel()
	rows, results := sn.rows, sn.results
	perRow := make([]events, len(rows))
	delivered := make([]bool, len(rows))
	var back []*store.Delivery
	var batch []int
	var wait <-chan time.Time // runs while outcomes wait for company
	for left := len(rows); left > 0; {
		select {
		case i := <-sn.done:
			batch = append(batch, i)
			left--
			if len(batch) == 1 {
				wait = time.After(recordWait)
			}
			if left > 0 && len(batch) < recordBatch {
				continue
			}
		case <-wait:
		}
		wait = nil
		var sent []int
		for _, i := range batch {
			if results[i].started {
				sent = append(sent, i)
			} else {
				back = append(back, rows[i])
			}
		}
		s.record(sn.ctx, st, sn.cfg, rows, results, sent, perRow, async)
		for _, i := range sent {
			delivered[i] = results[i].res.Outcome == delivery.Delivered
		}
		batch = batch[:0]
	}
	n := 0
	var out events
	for i := range rows {
		if delivered[i] {
			n++
		}
		out = append(out, perRow[i]...)
	}
	if len(back) > 0 {
		if err := st.Release(context.WithoutCancel(sn.ctx), back); err != nil {
			// They stay inflight until the lease lets a flush reclaim them.
			s.log.Error("could not hand unstarted deliveries back", "error", err.Error())
		}
	}
	return n, out
}

// An outcome waits at most recordWait for recordBatch-1 others before it
// is recorded. The wait bounds how many sends a crash of this process
// could leave unrecorded (and so resent, with the same delivery_id).
const (
	recordBatch = 64
	recordWait  = 50 * time.Millisecond
)

// attemptResult is one row's attempt; started is false when the budget ran
// out before the send began.
type attemptResult struct {
	res     delivery.Result
	started bool
}

// attempt makes one send. started is false when the budget ran out before
// the connector had a free slot.
func (s *Service) attempt(ctx context.Context, d *store.Delivery, conn *config.Connector) (delivery.Result, bool) {
	if conn == nil || !conn.IsEnabled() || conn.Type != d.ConnectorType {
		return delivery.Result{Outcome: delivery.Misconfigured,
			Err: "misconfigured: connector " + d.ConnectorID + " is no longer configured, enabled, or of type " + d.ConnectorType}, true
	}
	target, err := config.Resolve(conn, s.getenv)
	if err != nil {
		return delivery.Result{Outcome: delivery.Misconfigured, Err: s.errorText(err.Error())}, true
	}
	sem := s.semaphore(d.ProjectRoot, conn)
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return delivery.Result{}, false
	}
	defer func() { <-sem }()
	if ctx.Err() != nil {
		return delivery.Result{}, false
	}
	actx, cancel := context.WithTimeout(ctx, time.Duration(conn.TimeoutSecs)*time.Second)
	defer cancel()
	return s.sender.Send(actx, delivery.Request{
		DeliveryID: d.DeliveryID, EventID: d.EventID, Attempt: d.Attempts, Body: d.Payload,
		Connector: conn, Target: target,
	}, s.errorText), true
}

// record writes the outcomes of the attempts rows[i] for i in idx, in one
// transaction, and sets perRow[i] to their lifecycle events. The write
// ignores the request's cancellation: an attempt that happened must be
// recorded even while the plugin drains. With async, outcomes that are all
// successes are handed to recordLater instead.
func (s *Service) record(ctx context.Context, st *store.Store, cfg *config.Config, rows []*store.Delivery,
	results []attemptResult, idx []int, perRow []events, async bool) {
	if len(idx) == 0 {
		return
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	policy := config.RetryPolicy{MaxAttempts: config.DefaultMaxAttempts, BaseDelaySecs: config.DefaultBaseDelaySecs, MaxDelaySecs: config.DefaultMaxDelaySecs}
	if cfg != nil {
		policy = cfg.RetryPolicy
	}
	outs := make([]store.Outcome, len(idx))
	for k, i := range idx {
		d, res := rows[i], results[i].res
		s.noteOutcome(d.ProjectRoot, d.ConnectorID, res.Outcome, res.Err)
		o := store.Outcome{Delivery: d, Status: store.Dead, LastErr: res.Err, Code: res.StatusCode}
		switch {
		case res.Outcome == delivery.Delivered:
			o = store.Outcome{Delivery: d, Status: store.Sent, Code: res.StatusCode}
		case res.Outcome == delivery.Transient && d.Attempts < policy.MaxAttempts:
			o.Status, o.Next = store.Pending, s.now().Add(delivery.Backoff(policy, d.Attempts, res.RetryAfter, s.random))
		}
		outs[k] = o
		async = async && o.Status == store.Sent
	}
	if async {
		for k, i := range idx {
			perRow[i] = s.report(outs[k], results[i].res, nil)
		}
		s.recordLater(st, outs)
		return
	}
	errs := st.Record(wctx, outs)
	for k, i := range idx {
		perRow[i] = s.report(outs[k], results[i].res, errs[k])
	}
}

// report logs one recorded outcome and returns its lifecycle events (none
// when it could not be recorded).
func (s *Service) report(o store.Outcome, res delivery.Result, err error) events {
	d := o.Delivery
	var evs events
	switch o.Status {
	case store.Sent:
		if err == nil {
			evs.add(lifecycle(EventSent, d, map[string]any{"attempts": d.Attempts}))
		}
	case store.Pending:
		if err == nil {
			evs.add(lifecycle(EventFailed, d, map[string]any{"attempts": d.Attempts, "retriable": true, "last_error": res.Err}))
		}
		s.log.Info("delivery failed; will retry", "delivery_id", d.DeliveryID, "connector_id", d.ConnectorID,
			"attempts", d.Attempts, "retry_in", o.Next.Sub(s.now()).Round(time.Millisecond).String(), "error", res.Err)
	default:
		if err == nil {
			evs.add(lifecycle(EventFailed, d, map[string]any{"attempts": d.Attempts, "retriable": false, "last_error": res.Err}),
				lifecycle(EventDeadLettered, d, map[string]any{"attempts": d.Attempts, "last_error": res.Err}))
		}
		s.log.Warn("delivery dead-lettered", "delivery_id", d.DeliveryID, "connector_id", d.ConnectorID,
			"attempts", d.Attempts, "outcome", res.Outcome.String(), "error", res.Err)
	}
	switch {
	case errors.Is(err, store.ErrLostClaim):
		s.log.Warn("outcome not recorded: another process reclaimed the delivery", "delivery_id", d.DeliveryID)
	case err != nil:
		// The row stays inflight; its lease expiry or the next start
		// resends it (same delivery_id).
		s.noteError("the outbox could not record a delivery outcome")
		s.log.Error("outcome not recorded", "delivery_id", d.DeliveryID, "error", err.Error())
	}
	return evs
}

func secretNames(cfg *config.Config) []string {
	if cfg == nil {
		return nil
	}
	return cfg.SecretEnvNames()
}

// MaxErrorLen bounds the error text of a delivery (last_error in the
// outbox, lifecycle events, dead letters and health).
const MaxErrorLen = 300

// learnSecrets registers with the host connection the values of the
// variables names, in every form config.SecretValues knows they may take.
// From then on pluginkit replaces them with pluginkit.RedactedMarker in
// logs, error messages, last_error and errorText. The notifier calls it as
// it learns which variables hold secrets: the quick-start ones at Init, a
// connector's before its deliveries are sent. A variable is read once (the
// environment does not change under the process), and a value never leaves
// the registry: a text about an old secret stays scrubbed after a rotation.
func (s *Service) learnSecrets(names ...string) {
	if s.peer == nil {
		return // Init ran without a host connection (a test calling it directly)
	}
	s.learnMu.Lock()
	defer s.learnMu.Unlock()
	if s.learnt == nil {
		s.learnt = map[string]bool{}
	}
	var fresh []string
	for _, n := range names {
		if !s.learnt[n] {
			s.learnt[n] = true
			fresh = append(fresh, n)
		}
	}
	for _, v := range config.SecretValues(s.getenv, fresh...) {
		s.peer.AddSecret(v)
	}
}

// errorText is the form of a delivery's error text that the notifier
// stores and reports: registered secrets replaced, line breaks collapsed
// (it becomes one log attribute, one table cell in the deadletters
// command) and at most MaxErrorLen bytes. The delivery package gets it as
// its redaction function.
func (s *Service) errorText(text string) string {
	if s.peer != nil {
		text = s.peer.Redact(text)
	}
	text = strings.Join(strings.Fields(text), " ")
	if len(text) > MaxErrorLen {
		text = text[:MaxErrorLen-3] + "..."
	}
	return text
}

// maybePrune deletes old sent rows at most once per pruneEvery.
func (s *Service) maybePrune(ctx context.Context, st *store.Store) {
	now := s.now()
	s.mu.Lock()
	due := now.Sub(s.lastPrune) >= pruneEvery
	if due {
		s.lastPrune = now
	}
	s.mu.Unlock()
	if !due {
		return
	}
	if n, err := st.PruneSent(ctx, now.Add(-sentRetention), pruneBatch); err != nil {
		s.log.Warn("pruning sent deliveries failed", "error", err.Error())
	} else if n > 0 {
		s.log.Info("pruned sent deliveries", "count", n)
	}
}
