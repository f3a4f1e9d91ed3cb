package queue

import (
	"context"
	"fmt"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/wire"
)

// enqueueV2 is queue/v2/enqueue (queue-v2.md §3.4): idempotent by key
// forever, one live entry per subject, a subject generation per entry.
// Everything was validated while decoding; nothing here fails on input
// except a key already bound to other content, which rolls the whole call
// back (its sweep included).
func (s *Service) enqueueV2(ctx context.Context, req wire.EnqueueV2Request) (wire.EnqueueV2Response, error) {
	const method = "queue/v2/enqueue"
	var resp wire.EnqueueV2Response
	st, dispatch, err := s.openFor(ctx, req.Dispatch)
	if err != nil {
		return resp, err
	}
	hash, err := wire.RequestHash(&req, dispatch)
	if err != nil {
		return resp, pluginkit.Internal(err)
	}
	id := s.newID()
	err = st.Update(ctx, func(tx storage.Store) error {
		now := s.now()
		at := rustjson.Time(now)
		if err := s.sweep(ctx, tx, now, method); err != nil {
			return err
		}
		if req.IdempotencyKey != nil {
			done, err := replay(ctx, tx, *req.IdempotencyKey, hash, &resp)
			if done || err != nil {
				return err
			}
		}
		live, err := liveOf(ctx, tx, req.QualifiedID)
		if err != nil {
			return err
		}
		if live != nil {
			resp = wire.EnqueueV2Response{
				EntryID: live.ID, Subject: *subjectOf(&live.Ticket),
				Warning: fmt.Sprintf("subject %s already has an active generation; enqueue rejected", req.QualifiedID),
			}
			return bind(ctx, tx, req.IdempotencyKey, live.ID, hash, at)
		}
		e := newEntry(id, wire.EnqueueRequest{Dispatch: req.Dispatch, RunAt: req.RunAt, ExpireAfterSecs: req.ExpireAfterSecs}, dispatch)
		e.EnqueuedAt = at
		gen, err := tx.NextGeneration(ctx, req.QualifiedID)
		if err != nil {
			return err
		}
		e.QualifiedID, e.SubjectGeneration = &req.QualifiedID, &gen
		if taskID, ok := req.Dispatch.Subject.TaskIDV2(); ok {
			e.TaskID = &taskID
		}
		if r := req.Repository; r != nil {
			key := r.CollisionKey()
			e.RepoURL, e.RepoBaseRef, e.RepoHeadRef, e.RepoCollisionKey = &r.Repository, &r.BaseRef, &r.HeadRef, &key
		}
		if err := tx.Insert(ctx, e); err != nil {
			return err
		}
		if err := record(ctx, tx, e, method, "", wire.StatusPending, nil, now); err != nil {
			return err
		}
		resp = wire.EnqueueV2Response{Enqueued: true, EntryID: e.ID, Subject: *subjectOf(&e.Ticket)}
		return bind(ctx, tx, req.IdempotencyKey, e.ID, hash, at)
	})
	if err != nil {
		return wire.EnqueueV2Response{}, s.storageError(ctx, method, err)
	}
	return resp, nil
}

// replay answers a key that is already bound: the original receipt when
// the content matches, whatever became of the entry; -32602 (rolling the
// call back) when it does not.
func replay(ctx context.Context, tx storage.Store, key, hash string, resp *wire.EnqueueV2Response) (bool, error) {
	b, err := tx.GetBinding(ctx, key)
	if err != nil || b == nil {
		return false, err
	}
	if b.RequestHash != hash {
		return true, pluginkit.InvalidParams("idempotency_key is already bound to a different queue request")
	}
	var t *storage.Ticket
	if e, err := tx.Get(ctx, b.EntryID); err != nil {
		return true, err
	} else if e != nil {
		t = &e.Ticket
	} else if f, err := tx.GetFinished(ctx, b.EntryID); err != nil {
		return true, err
	} else if f != nil {
		t = &f.Ticket
	}
	if t == nil || !hasSubject(t) {
		return true, fmt.Errorf("idempotency key %q is bound to entry %s, which is gone", key, b.EntryID)
	}
	*resp = wire.EnqueueV2Response{EntryID: b.EntryID, Subject: *subjectOf(t)}
	return true, nil
}

func hasSubject(t *storage.Ticket) bool { return t.SubjectGeneration != nil && t.QualifiedID != nil }

// liveOf is the live entry a v2 add for qid must return instead of adding
// one (§3.4 step 5): the live ticketed entry with the highest generation,
// else the first pending or held old-style entry of the subject, which gets
// its identity now. An assigned old-style entry never counts.
func liveOf(ctx context.Context, tx storage.Store, qid string) (*storage.Entry, error) {
	e, err := tx.LiveTicketed(ctx, qid)
	if err != nil || e != nil {
		return e, err
	}
	olds, err := tx.OldStyleOf(ctx, qid)
	if err != nil {
		return nil, err
	}
	for _, o := range olds {
		if got, ok := canonicalOf(o); !ok || got != qid {
			continue
		}
		// o is old-style (the query's rule), so its identity is qid.
		if err := setIdentity(ctx, tx, o, qid); err != nil {
			return nil, err
		}
		return o, nil
	}
	return nil, nil
}

// bind binds an optional key to an entry.
func bind(ctx context.Context, tx storage.Store, key *string, entryID, hash, at string) error {
	if key == nil {
		return nil
	}
	return tx.Bind(ctx, *key, entryID, hash, at)
}
