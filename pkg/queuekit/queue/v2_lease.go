package queue

import (
	"context"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/wire"
)

// leaseV2 is queue/v2/lease (queue-v2.md §3.5): in one write transaction,
// sweep, walk the due pending entries in queue order (a bounded window),
// give old-style ones identity, skip what an exclude fence or a running
// entry blocks, and hand out up to max with a fresh lease generation.
// Assigned entries, expired tickets included, are never candidates and
// never reported: they come back only through recover.
func (s *Service) leaseV2(ctx context.Context, req wire.LeaseV2Request) (wire.LeaseV2Response, error) {
	const method = "queue/v2/lease"
	var resp wire.LeaseV2Response
	err := s.update(ctx, func(tx storage.Store) error {
		resp = wire.LeaseV2Response{Leased: []wire.FencedEntry{}}
		now := s.now()
		if err := s.sweep(ctx, tx, now, method); err != nil {
			return err
		}
		window := max(50, 10*int(req.Max))
		cands, err := tx.V2Candidates(ctx, unixNS(now), window)
		if err != nil {
			return err
		}
		l := leaser{tx: tx, req: &req, now: now, exp: now.Add(s.rules.Ticket()), resp: &resp}
		for _, e := range cands {
			if uint64(len(resp.Leased)) == req.Max {
				break
			}
			more, err := l.consider(ctx, e)
			if err != nil {
				return err
			}
			if !more {
				break
			}
		}
		return nil
	})
	if err != nil {
		return wire.LeaseV2Response{}, s.storageError(ctx, method, err)
	}
	return resp, nil
}

// leaser holds one v2 lease call's state.
type leaser struct {
	tx     storage.Store
	req    *wire.LeaseV2Request
	now    time.Time
	exp    time.Time
	nextWF int
	resp   *wire.LeaseV2Response
}

func (l *leaser) block(e *storage.Entry, reason string, with *wire.ExecutionFence) {
	l.resp.Blocked = append(l.resp.Blocked, wire.LeaseBlock{ConflictsWith: with, EntryID: e.ID, Reason: reason})
}

// consider applies §3.5 step 5 to one candidate; false stops the walk
// (no workflow id left).
func (l *leaser) consider(ctx context.Context, e *storage.Entry) (bool, error) {
	ok, err := ensureIdentity(ctx, l.tx, e)
	if err != nil {
		return false, err
	}
	if !ok {
		l.block(e, wire.BlockMissingExecutionIdentity, nil)
		return true, nil
	}
	subject := subjectOf(&e.Ticket)
	for _, f := range l.req.Exclude {
		if f.Subject != nil && *f.Subject == *subject {
			l.block(e, wire.BlockSubjectGenerationActive, f)
			return true, nil
		}
	}
	if e.RepoCollisionKey != nil {
		if with, blocked, err := l.collision(ctx, *e.RepoCollisionKey); err != nil {
			return false, err
		} else if blocked {
			l.block(e, wire.BlockRepositoryRefCollision, with)
			return true, nil
		}
	}
	next := *e
	if next.WorkflowID == nil || *next.WorkflowID == "" {
		if l.nextWF == len(l.req.WorkflowIDs) {
			return false, nil
		}
		wf := l.req.WorkflowIDs[l.nextWF]
		next.WorkflowID = &wf
	}
	if next.WorkflowGeneration == nil {
		one := int64(1)
		next.WorkflowGeneration = &one
	}
	at, atNS := rustjson.Time(l.now), unixNS(l.now)
	next.State, next.AssignedAt, next.AssignedAtNS, next.HeldAt = wire.StatusAssigned, &at, &atNS, nil
	next.LeaseOwner, next.LeaseGeneration = &l.req.OwnerID, e.LeaseGeneration+1
	setExpiry(&next, l.exp)
	fence := fenceOf(&next)
	if fence == nil {
		l.block(e, wire.BlockMissingExecutionIdentity, nil)
		return true, nil
	}
	if e.WorkflowID == nil || *e.WorkflowID == "" {
		l.nextWF++ // consumed only by a hand-out
	}
	if err := l.tx.Save(ctx, &next); err != nil {
		return false, err
	}
	if err := record(ctx, l.tx, &next, "queue/v2/lease", wire.StatusPending, wire.StatusAssigned, nil, l.now); err != nil {
		return false, err
	}
	l.resp.Leased = append(l.resp.Leased, wire.FencedEntry{Entry: WireEntry(&next), Execution: *fence})
	return true, nil
}

// collision finds what holds a reservation's collision key: an exclude
// fence first, else the earliest-assigned ticketed entry (entries handed
// out earlier in this call included, as they are already saved).
func (l *leaser) collision(ctx context.Context, key string) (*wire.ExecutionFence, bool, error) {
	for _, f := range l.req.Exclude {
		if f.Repository != nil && f.Repository.CollisionKey() == key {
			return f, true, nil
		}
	}
	holder, err := l.tx.AssignedCollision(ctx, key)
	if err != nil || holder == nil {
		return nil, false, err
	}
	return fenceOf(holder), true, nil
}
