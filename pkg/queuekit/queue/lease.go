package queue

import (
	"context"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/wire"
)

// leaseExpiredReason is the audit reason of a reclaimed lease.
const leaseExpiredReason = "lease expired (ANIMUS_QUEUE_LEASE_TTL_SECS)"

// lease is the atomic dispatch path (queue.md §3.4): in one write
// transaction, sweep, walk the due pending entries in queue order, skip
// excluded subjects (and every subject already leased in this batch), and
// assign up to max. Another process's lease waits on the write lock and
// then sees these entries assigned, so no entry is leased twice.
func (s *Service) lease(ctx context.Context, req wire.LeaseRequest) (wire.LeaseResponse, error) {
	const method = "queue/lease"
	resp := wire.LeaseResponse{Leased: []wire.Entry{}}
	if req.WorkflowIDs != nil && uint64(len(req.WorkflowIDs)) != req.Max {
		return resp, errWorkflowIDCount(len(req.WorkflowIDs), req.Max)
	}
	st, err := s.open(ctx)
	if err != nil {
		return resp, err
	}
	if req.Max == 0 {
		return resp, nil // no sweep, no write
	}
	exclude := make(map[string]bool, len(req.ExcludeSubjects))
	for _, k := range req.ExcludeSubjects {
		exclude[k] = true
	}
	var leased []*storage.Entry
	err = st.Update(ctx, func(tx storage.Store) error {
		now := s.now() // read under the lock: waiting for it must not age the decision
		leased = leased[:0]
		if err := s.sweep(ctx, tx, now, method); err != nil {
			return err
		}
		picked := map[string]bool{}
		var reclaimBefore *int64
		if s.rules.LeaseTTL > 0 {
			// An old-style lease ages from assigned_at, whoever leased it:
			// turning the setting on after a crash reclaims the entries the
			// crashed process left assigned.
			cutoff := addNS(unixNS(now), -s.rules.LeaseTTL)
			reclaimBefore = &cutoff
		}
		err := tx.Leasable(ctx, unixNS(now), reclaimBefore, func(e *storage.Entry) bool {
			if exclude[e.SubjectKey] || picked[e.SubjectKey] {
				return true
			}
			if _, err := wire.DecodeDispatch(e.Dispatch); err != nil {
				logger(ctx).Warn("skipping an entry whose dispatch does not decode", "entry_id", e.ID, "error", err)
				return true
			}
			picked[e.SubjectKey] = true
			leased = append(leased, e)
			return uint64(len(leased)) < req.Max
		})
		if err != nil {
			return err
		}
		for k, e := range leased {
			from := e.State
			var reason *string
			if from == wire.StatusAssigned {
				r := leaseExpiredReason
				reason = &r
			}
			var wf string
			if req.WorkflowIDs != nil {
				wf = req.WorkflowIDs[k]
			} else {
				wf = s.newID()
			}
			s.assign(e, wf, now)
			if err := tx.Save(ctx, e); err != nil {
				return err
			}
			if err := record(ctx, tx, e, method, from, wire.StatusAssigned, reason, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return resp, s.storageError(ctx, method, err)
	}
	for _, e := range leased {
		resp.Leased = append(resp.Leased, WireEntry(e))
	}
	return resp, nil
}

// assign turns e into an assigned entry owned by workflow wf.
func (s *Service) assign(e *storage.Entry, wf string, now time.Time) {
	at, atNS := rustjson.Time(now), unixNS(now)
	e.State, e.WorkflowID, e.AssignedAt, e.AssignedAtNS, e.HeldAt = wire.StatusAssigned, &wf, &at, &atNS, nil
	e.LeaseExpiresNS = nil
	if s.rules.LeaseTTL > 0 {
		exp := addNS(unixNS(now), s.rules.LeaseTTL)
		e.LeaseExpiresNS = &exp
	}
}

// markAssigned assigns one pending entry by id, ignoring deferral and
// exclusion (tests and compatibility; the daemon never calls it).
func (s *Service) markAssigned(ctx context.Context, req wire.MarkAssignedRequest) (wire.MutationResponse, error) {
	const method = "queue/mark_assigned"
	return s.mutate(ctx, method, req.EntryID, func(tx storage.Store, e *storage.Entry, now time.Time) (wire.MutationResponse, error) {
		if e.Ticketed() {
			return wire.MutationResponse{}, errTicketed(e.ID)
		}
		switch e.State {
		case wire.StatusAssigned:
			return wire.MutationResponse{}, nil // keeps its workflow_id even if another is passed
		case wire.StatusHeld:
			return wire.MutationResponse{}, errNotPending(e.ID, e.State)
		}
		wf := ""
		switch {
		case req.WorkflowID != nil:
			wf = *req.WorkflowID
		case e.WorkflowID != nil:
			wf = *e.WorkflowID
		default:
			wf = s.newID()
		}
		s.assign(e, wf, now)
		if err := tx.Save(ctx, e); err != nil {
			return wire.MutationResponse{}, err
		}
		return wire.MutationResponse{Changed: true}, record(ctx, tx, e, method, wire.StatusPending, wire.StatusAssigned, nil, now)
	})
}

// releasePending hands an assigned entry back (assigned → pending) at its
// old position, so the next lease finds it at or near the head.
func (s *Service) releasePending(ctx context.Context, req wire.ReleasePendingRequest) (wire.ReleasePendingResponse, error) {
	const method = "queue/release_pending"
	err := s.update(ctx, func(tx storage.Store) error {
		now := s.now()
		e, err := tx.Get(ctx, req.EntryID)
		switch {
		case err != nil:
			return err
		case e == nil:
			return errEntryNotFound(req.EntryID)
		case e.Ticketed():
			return errTicketed(e.ID)
		case e.State != wire.StatusAssigned:
			return errNotAssigned(e.ID, e.State)
		}
		released := *e
		released.State, released.AssignedAt, released.WorkflowID, released.LeaseExpiresNS = wire.StatusPending, nil, nil, nil
		released.AssignedAtNS = nil
		if err := tx.Save(ctx, &released); err != nil {
			return err
		}
		// The audit row keeps the workflow the entry was released from.
		return record(ctx, tx, e, method, wire.StatusAssigned, wire.StatusPending, &req.Reason, now)
	})
	if err != nil {
		return wire.ReleasePendingResponse{}, s.storageError(ctx, method, err)
	}
	return wire.ReleasePendingResponse{EntryID: req.EntryID, Status: wire.StatusPending}, nil
}

// completion closes an assigned entry. Anything that does not match —
// a missing entry, one that is not assigned, another workflow_ref, or
// another workflow_id — answers not_found and deletes nothing: a stale
// frame must never remove queued work (queue.md §3.4).
func (s *Service) completion(ctx context.Context, req wire.CompletionRequest) (wire.MutationResponse, error) {
	const method = "queue/completion"
	switch req.Status {
	case wire.CompletionCompleted, wire.CompletionFailed, wire.CompletionCancelled:
	default:
		return wire.MutationResponse{}, errCompletionStatus(req.Status)
	}
	return s.mutate(ctx, method, req.EntryID, func(tx storage.Store, e *storage.Entry, now time.Time) (wire.MutationResponse, error) {
		notFound := wire.MutationResponse{NotFound: true}
		switch {
		case e.State != wire.StatusAssigned:
			return notFound, nil
		case req.WorkflowRef != nil && *req.WorkflowRef != e.WorkflowRef:
			return notFound, nil
		case req.WorkflowID != nil && e.WorkflowID != nil && *req.WorkflowID != *e.WorkflowID:
			return notFound, nil
		}
		// Accepted for ticketed entries too (the 0.7 reconcilers rely on
		// it); the finished record keeps the fence, so a later v2
		// completion with it answers already_applied.
		if err := tx.Finish(ctx, e.ID, req.Status, rustjson.Time(now), method); err != nil {
			return wire.MutationResponse{}, err
		}
		return wire.MutationResponse{Changed: true}, record(ctx, tx, e, method, wire.StatusAssigned, req.Status, nil, now)
	})
}
