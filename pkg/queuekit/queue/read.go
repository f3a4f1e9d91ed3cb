package queue

import (
	"context"
	"encoding/json"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/wire"
)

// list is the read-only view: entries in queue order, filtered by status
// then paginated, the filtered total, and the whole queue's stats, all from
// one snapshot. It does not sweep, so expired entries show until the next
// enqueue, lease or next_deadline (as in the references).
func (s *Service) list(ctx context.Context, req wire.ListRequest) (wire.ListResponse, error) {
	const method = "queue/list"
	resp := wire.ListResponse{Entries: []wire.Entry{}}
	st, err := s.open(ctx)
	if err != nil {
		return resp, err
	}
	nowNS := unixNS(s.now())
	s.mu.Lock()
	limit := s.paging.apply(&req)
	s.mu.Unlock()
	err = st.View(ctx, func(r storage.Store) error {
		counts, err := r.Counts(ctx, nowNS)
		if err != nil {
			return err
		}
		resp.Stats = WireStats(counts)
		entries, total, err := r.List(ctx, req.Status, limit, req.Offset)
		if err != nil {
			return err
		}
		resp.Total = total
		for _, e := range entries {
			resp.Entries = append(resp.Entries, WireEntry(e))
		}
		return nil
	})
	if err != nil {
		return wire.ListResponse{}, s.storageError(ctx, method, err)
	}
	return resp, nil
}

// stats answers the aggregate counts. Params are ignored.
func (s *Service) stats(ctx context.Context, _ pluginkit.NoParams) (wire.Stats, error) {
	st, err := s.open(ctx)
	if err != nil {
		return wire.Stats{}, err
	}
	nowNS := unixNS(s.now())
	var counts storage.Counts
	err = st.View(ctx, func(r storage.Store) error {
		counts, err = r.Counts(ctx, nowNS)
		return err
	})
	if err != nil {
		return wire.Stats{}, s.storageError(ctx, "queue/stats", err)
	}
	return WireStats(counts), nil
}

// nextDeadline sweeps, then answers the earliest run_at still in the
// future among pending entries ({} when none), so the daemon never sleeps
// towards an entry that has already expired. Params are ignored.
func (s *Service) nextDeadline(ctx context.Context, _ pluginkit.NoParams) (wire.NextDeadlineResponse, error) {
	const method = "queue/next_deadline"
	var resp wire.NextDeadlineResponse
	var runAt *string
	err := s.update(ctx, func(tx storage.Store) error {
		now := s.now()
		if err := s.sweep(ctx, tx, now, method); err != nil {
			return err
		}
		at, err := tx.NextRunAt(ctx, unixNS(now))
		runAt = at
		return err
	})
	if err != nil {
		return resp, s.storageError(ctx, method, err)
	}
	if runAt != nil {
		// run_at_ns is only set for a parseable run_at.
		if at, err := rustjson.ParseTime(*runAt); err == nil {
			ts := rustjson.Time(at)
			resp.NextRunAt = &ts
		}
	}
	return resp, nil
}

func WireStats(c storage.Counts) wire.Stats {
	return wire.Stats{Assigned: c.Assigned, Deferred: c.Deferred, Held: c.Held, Pending: c.Pending, Total: c.Total()}
}

// WireEntry renders a stored entry as QueueEntry.
func WireEntry(e *storage.Entry) wire.Entry {
	out := wire.Entry{
		AssignedAt:      e.AssignedAt,
		EnqueuedAt:      e.EnqueuedAt,
		EntryID:         e.ID,
		HeldAt:          e.HeldAt,
		RunAt:           e.RunAt,
		Status:          e.State,
		SubjectDispatch: e.Dispatch,
		SubjectID:       subjectID(e),
		TaskID:          e.TaskID,
		WorkflowID:      e.WorkflowID,
	}
	if e.ExpireAfterSecs != nil {
		out.ExpireAfterSecs = json.Number(*e.ExpireAfterSecs)
	}
	return out
}

// subjectID is QueueEntry.subject_id: the canonical id for a ticketed
// entry (§6.13; FencedQueueEntry validation needs it), the 0.3.x subject
// key for an old-style one.
func subjectID(e *storage.Entry) string {
	if hasSubject(&e.Ticket) {
		return *e.QualifiedID
	}
	return e.SubjectKey
}
