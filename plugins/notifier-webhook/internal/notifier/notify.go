package notifier

import (
	"context"
	"runtime"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/delivery"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/store"
)

// Notify handles notifier/notify: route the event, commit one outbox row
// per route in a single transaction, then make one bounded synchronous
// attempt at the new rows. Only after the commit is the event acknowledged;
// from then on nothing is lost, whatever happens to the receiver or to this
// process.
//
// accepted is true when at least one connector owns the event (also when
// it already did: re-notifying is a no-op). delivered counts the
// synchronous successes of this call.
func (s *Service) Notify(ctx context.Context, p NotifyParams) (NotifyResult, error) {
	st, err := s.outbox()
	if err != nil {
		return NotifyResult{}, err
	}
	ev := p.Event
	project := *ev.ProjectRoot
	cfg, err := s.loader.Load(project)
	if err != nil {
		s.noteError(err.Error())
		return NotifyResult{}, pluginkit.Unavailable("notification configuration: %s", err.Error())
	}
	res := NotifyResult{LifecycleEvents: []LifecycleEvent{}}
	if cfg == nil {
		return res, nil
	}
	ds, err := BuildDeliveries(cfg, ev)
	if err != nil {
		return NotifyResult{}, pluginkit.Internal(err)
	}
	if len(ds) == 0 {
		return res, nil
	}
	// A connector whose receiver keeps failing gets the row enqueued only;
	// flush retries it on the backoff schedule.
	claim := func(d *store.Delivery) bool { return !s.breakerOpen(d.ProjectRoot, d.ConnectorID) }
	// The claimed rows' sends start once the transaction has inserted
	// them, and go out while its commit waits for the fsync: the two
	// waits overlap instead of adding up. The answer still waits for the
	// commit. A send may so reach its receiver before the row is durable;
	// if the commit then fails, notify reports the failure and the event
	// is not accepted, though delivered once (delivery is at least once
	// either way; nothing is lost).
	var sn *sends
	start := func(inserted []*store.Delivery) {
		var claimed []*store.Delivery
		for _, d := range inserted {
			if d.Status == store.Inflight {
				claimed = append(claimed, d)
			}
		}
		if len(claimed) > 0 {
			sn = s.startSends(ctx, cfg, claimed, time.Now().Add(s.syncBudget))
			// On one P (pluginkit runs a lone call so) the sends would
			// wait for the commit's cgo call to return; yield so they
			// write their requests first.
			runtime.Gosched()
		}
	}
	inserted, err := st.Enqueue(ctx, ds, claim, start)
	if err != nil {
		if sn != nil {
			sn.cancel() // what has not started stays unsent
		}
		s.noteError("the outbox could not record an event")
		return NotifyResult{}, pluginkit.Unavailable("the outbox could not record the event; it was not accepted").Wrap(err)
	}
	res.Accepted = true
	var evs events
	for _, d := range inserted {
		evs.add(lifecycle(EventEnqueued, d, nil))
	}
	if sn != nil {
		sent, more := s.finish(st, sn, true)
		evs = append(evs, more...)
		res.Delivered = sent
	}
	res.LifecycleEvents = evs.list()
	return res, nil
}

// recordLater records successful outcomes of notify's sends after notify
// has answered, so the answer does not wait for a second commit. Such a
// record is bookkeeping committed at synchronous=NORMAL, which a power
// loss may already roll back; answering first adds only a crash of this
// process in the ~100 µs before the commit. Either way the row stays
// inflight and is sent again, with its delivery_id, once recovered (at the
// next start, or when its lease expires): at least once, as before, but
// its delivery-sent event is then reported twice. Close waits for these
// records. Failures are recorded before notify answers: their events say
// what was recorded (a retry's due time, a dead letter).
func (s *Service) recordLater(st *store.Store, outs []store.Outcome) {
	record := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for k, err := range st.Record(ctx, outs) {
			if err != nil {
				s.report(outs[k], delivery.Result{}, err) // logs it
			}
		}
	}
	// Counted under mu, where Close takes the store away before it
	// waits: a handler Close abandoned records on its own goroutine.
	s.mu.Lock()
	open := s.store == st
	if open {
		s.later.Add(1)
	}
	s.mu.Unlock()
	if !open {
		record()
		return
	}
	go func() {
		defer s.later.Done()
		record()
	}()
}

// Schema handles notifier/schema.
func (s *Service) Schema(context.Context, struct{}) (SchemaResult, error) {
	return SchemaResult{ConnectorKinds: []string{"webhook", "slack_webhook"}, SupportsFlush: true}, nil
}
