package notifier

import (
	"context"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
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
	inserted, err := st.Enqueue(ctx, ds, claim)
	if err != nil {
		s.noteError("the outbox could not record an event")
		return NotifyResult{}, pluginkit.Unavailable("the outbox could not record the event; it was not accepted").Wrap(err)
	}
	res.Accepted = true
	var evs events
	var claimed []*store.Delivery
	for _, d := range inserted {
		evs.add(lifecycle(EventEnqueued, d, nil))
		if d.Status == store.Inflight {
			claimed = append(claimed, d)
		}
	}
	sent, more := s.sendAll(ctx, st, cfg, claimed, time.Now().Add(s.syncBudget))
	evs = append(evs, more...)
	res.Delivered = sent
	res.LifecycleEvents = evs.list()
	return res, nil
}

// Schema handles notifier/schema.
func (s *Service) Schema(context.Context, struct{}) (SchemaResult, error) {
	return SchemaResult{ConnectorKinds: []string{"webhook", "slack_webhook"}, SupportsFlush: true}, nil
}
