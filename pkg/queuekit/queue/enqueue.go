package queue

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/wire"
)

// auditPruneBatch bounds the audit rows one enqueue deletes.
const auditPruneBatch = 64

// enqueue appends a dispatch at the tail (queue.md §3.4). Like the 0.3.2
// references it never dedupes: a subject that already has live entries
// gets another one, and the answer carries a warning.
func (s *Service) enqueue(ctx context.Context, req wire.EnqueueRequest) (wire.EnqueueResponse, error) {
	const method = "queue/enqueue"
	var resp wire.EnqueueResponse
	st, dispatch, err := s.openFor(ctx, req.Dispatch)
	if err != nil {
		return resp, err
	}
	e := newEntry(s.newID(), req, dispatch)

	var existing int
	err = st.Update(ctx, func(tx storage.Store) error {
		// The clock is read under the lock, so enqueued_at follows the
		// queue order even when processes wait for each other.
		now := s.now()
		e.EnqueuedAt = rustjson.Time(now)
		if err := s.sweep(ctx, tx, now, method); err != nil {
			return err
		}
		var err error
		if existing, err = tx.CountSubject(ctx, e.SubjectKey); err != nil {
			return err
		}
		if err := tx.Insert(ctx, e); err != nil {
			return err
		}
		if err := record(ctx, tx, e, method, "", wire.StatusPending, nil, now); err != nil {
			return err
		}
		if s.rules.AuditRetention > 0 {
			return tx.PruneAudit(ctx, unixNS(now)-int64(s.rules.AuditRetention), auditPruneBatch)
		}
		return nil
	})
	if err != nil {
		return resp, s.storageError(ctx, method, err)
	}
	resp = wire.EnqueueResponse{Enqueued: true, EntryID: e.ID, SubjectID: e.SubjectKey}
	if existing > 0 {
		noun := "entry"
		if existing > 1 {
			noun = "entries"
		}
		resp.Warning = fmt.Sprintf("subject %s already has %d queued %s; duplicate enqueued", e.SubjectKey, existing, noun)
	}
	return resp, nil
}

// openFor opens the store for an add and renders the dispatch as stored.
func (s *Service) openFor(ctx context.Context, d wire.Dispatch) (storage.Store, []byte, error) {
	st, err := s.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	dispatch, err := d.Encode()
	if err != nil {
		return nil, nil, pluginkit.Internal(err)
	}
	return st, dispatch, nil
}

// newEntry builds the stored row (enqueued_at is set under the lock). run_at is kept verbatim for the wire and
// parsed for comparisons; an unparseable run_at is accepted and makes the
// entry due at once, as in the file reference. expire_after_secs is kept
// even without run_at (and then ignored).
func newEntry(id string, req wire.EnqueueRequest, dispatch []byte) *storage.Entry {
	subject := *req.Dispatch.Subject
	e := &storage.Entry{
		ID:          id,
		State:       wire.StatusPending,
		SubjectKey:  subject.Key(),
		WorkflowRef: req.Dispatch.WorkflowRef,
		RunAt:       req.RunAt,
		Dispatch:    dispatch,
	}
	if taskID, ok := subject.TaskID(); ok {
		e.TaskID = &taskID
	}
	if qid, err := subject.CanonicalID(); err == nil {
		e.QualifiedID = &qid // lets a v2 add find this entry by subject
	}
	if req.ExpireAfterSecs != nil {
		secs := strconv.FormatUint(*req.ExpireAfterSecs, 10)
		e.ExpireAfterSecs = &secs
	}
	if req.RunAt != nil {
		if at, err := rustjson.ParseTime(*req.RunAt); err == nil {
			ns := unixNS(at)
			e.RunAtNS = &ns
			if req.ExpireAfterSecs != nil {
				e.ExpireAtNS = expiryNS(at, *req.ExpireAfterSecs)
			}
		}
	}
	return e
}

// sweep drops expired deferred entries; enqueue, lease and next_deadline
// call it first, list and stats never do (queue.md §3.5.4).
func (s *Service) sweep(ctx context.Context, tx storage.Store, now time.Time, method string) error {
	n, err := tx.SweepExpired(ctx, unixNS(now), rustjson.Time(now), method)
	if n > 0 {
		logger(ctx).Info("expired deferred entries", "count", n)
	}
	return err
}

// record appends a status transition to the audit trail; from is "" for
// enqueue.
func record(ctx context.Context, tx storage.Store, e *storage.Entry, method, from, to string, reason *string, now time.Time) error {
	a := storage.Audit{
		EntryID: e.ID, SubjectKey: e.SubjectKey, At: rustjson.Time(now), AtNS: unixNS(now),
		Method: method, To: to, WorkflowID: e.WorkflowID, Reason: reason,
	}
	if from != "" {
		a.From = &from
	}
	return tx.Record(ctx, a)
}
