package trigger

import (
	"context"
	"time"

	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/inbound"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/mapping"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/store"
)

const (
	// maxBatch is how many queued deliveries one seen-set transaction
	// claims: under a burst, one commit serves many events.
	maxBatch = 64
	// storeTimeout bounds one claim; it is not the host's context, so a
	// claim still completes while the plugin drains.
	storeTimeout = 5 * time.Second
	// pruneEvery is how often expired seen-set entries are deleted.
	pruneEvery = time.Hour
)

// emit runs the emitter until ctx ends, then emits what is already queued
// (those envelopes are acked, and Slack will not send them again).
func (s *Service) emit(ctx context.Context) {
	prune := time.NewTicker(pruneEvery)
	defer prune.Stop()
	batch := make([]inbound.Delivery, 0, maxBatch)
	for {
		select {
		case <-ctx.Done():
			for {
				batch = s.fill(batch[:0])
				if len(batch) == 0 {
					return
				}
				s.process(batch)
			}
		case <-prune.C:
			s.prune()
		case d := <-s.queue:
			s.process(s.fill(append(batch[:0], d)))
		}
	}
}

// fill adds whatever is queued, without waiting, up to maxBatch.
func (s *Service) fill(batch []inbound.Delivery) []inbound.Delivery {
	for len(batch) < maxBatch {
		select {
		case d := <-s.queue:
			batch = append(batch, d)
		default:
			return batch
		}
	}
	return batch
}

// process maps, claims and notifies one batch, in delivery order.
func (s *Service) process(batch []inbound.Delivery) {
	rules := s.rules
	if id := s.identity.Load(); id != nil {
		rules.Self = *id
	}
	events := make([]mapping.Event, 0, len(batch))
	for _, d := range batch {
		ev, drop := mapping.Map(d.Payload, rules)
		if drop != nil {
			s.stats.Dropped.Add(1)
			if drop.Malformed {
				s.log.Warn("slack event dropped", "reason", drop.Reason, "transport", d.Transport)
			} else {
				s.log.Debug("slack event ignored", "reason", drop.Reason, "transport", d.Transport)
			}
			continue
		}
		if d.Retry > 0 {
			s.log.Debug("slack redelivery", "event_id", ev.EventID, "retry", d.Retry, "reason", d.RetryReason)
		}
		events = append(events, ev)
	}
	if len(events) == 0 {
		return
	}
	fresh := s.claim(events)
	for i, ev := range events {
		if !fresh[i] {
			s.stats.Duplicates.Add(1)
			s.log.Debug("duplicate slack event suppressed", "event_id", ev.EventID, "slack_event_id", ev.SlackEventID)
			continue
		}
		if err := s.notify("trigger/event", ev); err != nil {
			// The host is gone. Forget the claims of everything not
			// emitted, so whoever serves next emits Slack's redelivery.
			s.log.Warn("cannot emit trigger/event", "event_id", ev.EventID, "error", err)
			s.release(events[i:], fresh[i:])
			return
		}
		s.stats.Emitted.Add(1)
	}
}

// claim asks the seen-set which events are new. If it fails, every event
// counts as new: emitting a possible duplicate is better than dropping a
// request, and health shows the failure until a claim succeeds again.
func (s *Service) claim(events []mapping.Event) []bool {
	items := make([]store.Item, len(events))
	for i, ev := range events {
		items[i] = store.Item{EventID: ev.EventID, Keys: ev.DedupKeys()}
	}
	fresh, err := s.withStore(func(ctx context.Context, st *store.Store) ([]bool, error) { return st.Claim(ctx, items) })
	if err == nil {
		s.storeErr.Store(nil)
		return fresh
	}
	msg := "dedup store unavailable; emitting without dedup"
	s.storeErr.Store(&msg)
	s.log.Error(msg, "error", err)
	fresh = make([]bool, len(events))
	for i := range fresh {
		fresh[i] = true
	}
	return fresh
}

func (s *Service) release(events []mapping.Event, fresh []bool) {
	for i, ev := range events {
		if !fresh[i] {
			continue
		}
		if _, err := s.withStore(func(ctx context.Context, st *store.Store) ([]bool, error) {
			return nil, st.Release(ctx, ev.DedupKeys())
		}); err != nil {
			s.log.Warn("cannot release dedup claim", "event_id", ev.EventID, "error", err)
		}
	}
}

func (s *Service) prune() {
	if _, err := s.withStore(func(ctx context.Context, st *store.Store) ([]bool, error) {
		n, err := st.Prune(ctx)
		if n > 0 {
			s.log.Debug("pruned expired dedup entries", "count", n)
		}
		return nil, err
	}); err != nil {
		s.log.Warn("dedup prune failed", "error", err)
	}
}

func (s *Service) withStore(fn func(context.Context, *store.Store) ([]bool, error)) ([]bool, error) {
	st := s.store.Load()
	if st == nil {
		return nil, errNoStore
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	return fn(ctx, st)
}

type storeError string

func (e storeError) Error() string { return string(e) }

const errNoStore = storeError("dedup store is closed")
