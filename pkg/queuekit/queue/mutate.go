package queue

import (
	"context"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/wire"
)

// mutate runs one entry-targeted mutation in a write transaction. A missing
// entry answers {"changed":false,"not_found":true}; otherwise fn decides,
// and an error from fn rolls everything back.
func (s *Service) mutate(ctx context.Context, method, id string,
	fn func(tx storage.Store, e *storage.Entry, now time.Time) (wire.MutationResponse, error),
) (wire.MutationResponse, error) {
	var resp wire.MutationResponse
	err := s.update(ctx, func(tx storage.Store) error {
		now := s.now() // under the lock, so timestamps follow commit order
		e, err := tx.Get(ctx, id)
		if err != nil {
			return err
		}
		if e == nil {
			resp = wire.MutationResponse{NotFound: true}
			return nil
		}
		resp, err = fn(tx, e, now)
		return err
	})
	if err != nil {
		return wire.MutationResponse{}, s.storageError(ctx, method, err)
	}
	return resp, nil
}

// hold parks a pending (or deferred) entry: pending → held. The reason,
// which the references ignore, is kept in the audit trail.
func (s *Service) hold(ctx context.Context, req wire.HoldRequest) (wire.MutationResponse, error) {
	const method = "queue/hold"
	return s.mutate(ctx, method, req.EntryID, func(tx storage.Store, e *storage.Entry, now time.Time) (wire.MutationResponse, error) {
		switch e.State {
		case wire.StatusHeld:
			return wire.MutationResponse{}, nil
		case wire.StatusAssigned:
			return wire.MutationResponse{}, errNotPending(e.ID, e.State)
		}
		at := rustjson.Time(now)
		e.State, e.HeldAt = wire.StatusHeld, &at
		if err := tx.Save(ctx, e); err != nil {
			return wire.MutationResponse{}, err
		}
		return wire.MutationResponse{Changed: true}, record(ctx, tx, e, method, wire.StatusPending, wire.StatusHeld, req.Reason, now)
	})
}

// release un-parks a held entry at its old position: held → pending.
func (s *Service) release(ctx context.Context, req wire.ReleaseRequest) (wire.MutationResponse, error) {
	const method = "queue/release"
	return s.mutate(ctx, method, req.EntryID, func(tx storage.Store, e *storage.Entry, now time.Time) (wire.MutationResponse, error) {
		switch e.State {
		case wire.StatusPending:
			return wire.MutationResponse{}, nil
		case wire.StatusAssigned:
			return wire.MutationResponse{}, errNotPending(e.ID, e.State)
		}
		e.State, e.HeldAt = wire.StatusPending, nil
		if err := tx.Save(ctx, e); err != nil {
			return wire.MutationResponse{}, err
		}
		return wire.MutationResponse{Changed: true}, record(ctx, tx, e, method, wire.StatusHeld, wire.StatusPending, nil, now)
	})
}

// drop removes a live entry whatever its status, assigned included.
func (s *Service) drop(ctx context.Context, req wire.DropRequest) (wire.MutationResponse, error) {
	const method = "queue/drop"
	return s.mutate(ctx, method, req.EntryID, func(tx storage.Store, e *storage.Entry, now time.Time) (wire.MutationResponse, error) {
		if err := tx.Finish(ctx, e.ID, "dropped", rustjson.Time(now), method); err != nil {
			return wire.MutationResponse{}, err
		}
		return wire.MutationResponse{Changed: true}, record(ctx, tx, e, method, e.State, "dropped", nil, now)
	})
}

// reorder moves the named entries to the front in the given order; the
// rest keep their relative order behind them. Unknown and repeated ids are
// ignored (first occurrence wins). reordered_count is the number of
// positions whose occupant changed; 0 writes nothing.
func (s *Service) reorder(ctx context.Context, req wire.ReorderRequest) (wire.ReorderResponse, error) {
	const method = "queue/reorder"
	var resp wire.ReorderResponse
	err := s.update(ctx, func(tx storage.Store) error {
		resp = wire.ReorderResponse{} // a backend may run fn again
		named, last, err := namedEntries(ctx, tx, req.EntryIDs)
		if err != nil || len(named) == 0 {
			return err
		}
		// Past the last named entry the old and new orders coincide, so
		// only the prefix up to it is compared (and loaded).
		prefix, err := tx.Prefix(ctx, last)
		if err != nil {
			return err
		}
		isNamed := make(map[string]bool, len(named))
		for _, id := range named {
			isNamed[id] = true
		}
		next := append([]string(nil), named...)
		for _, p := range prefix {
			if !isNamed[p.ID] {
				next = append(next, p.ID)
			}
		}
		for i, p := range prefix {
			if p.ID != next[i] {
				resp.ReorderedCount++
			}
		}
		if resp.ReorderedCount == 0 {
			return nil
		}
		// New ordinals below the current minimum cannot collide.
		base := prefix[0].Ordinal - int64(len(named))
		for i, id := range named {
			if err := tx.SetOrdinal(ctx, id, base+int64(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return wire.ReorderResponse{}, s.storageError(ctx, method, err)
	}
	return resp, nil
}

// namedEntries keeps the ids that name live entries, first occurrence
// first, and returns the largest ordinal among them.
func namedEntries(ctx context.Context, tx storage.Store, ids []string) ([]string, int64, error) {
	seen := make(map[string]bool, len(ids))
	var named []string
	var last int64
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		e, err := tx.Get(ctx, id)
		if err != nil {
			return nil, 0, err
		}
		if e == nil {
			continue
		}
		if len(named) == 0 || e.Ordinal > last {
			last = e.Ordinal
		}
		named = append(named, id)
	}
	return named, last, nil
}
