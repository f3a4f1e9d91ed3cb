package queue

import (
	"context"
	"strings"

	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/wire"
)

// fenceOf is the current fence of a stored entry, or nil when the entry
// has never been handed out under v2 (or its stored identity is damaged).
func fenceOf(e *storage.Entry) *wire.ExecutionFence {
	return fenceFrom(e.ID, e.WorkflowID, &e.Ticket)
}

// finishedFence is the fence a finished entry had when it left the queue.
func finishedFence(f *storage.Finished) *wire.ExecutionFence {
	return fenceFrom(f.ID, f.WorkflowID, &f.Ticket)
}

func fenceFrom(id string, wf *string, t *storage.Ticket) *wire.ExecutionFence {
	if t.SubjectGeneration == nil || t.QualifiedID == nil || wf == nil || *wf == "" ||
		t.WorkflowGeneration == nil || t.LeaseOwner == nil || t.LeaseExpiresAt == nil || t.LeaseGeneration <= 0 {
		return nil
	}
	f := &wire.ExecutionFence{
		QueueLease: &wire.QueueLeaseFence{
			EntryID: id, ExpiresAt: *t.LeaseExpiresAt, Generation: uint64(t.LeaseGeneration), OwnerID: *t.LeaseOwner,
		},
		Schema:             wire.FenceSchema,
		Subject:            subjectOf(t),
		Version:            wire.FenceVersion,
		WorkflowGeneration: uint64(*t.WorkflowGeneration),
		WorkflowID:         *wf,
	}
	if t.RepoURL != nil && t.RepoBaseRef != nil && t.RepoHeadRef != nil {
		f.Repository = &wire.RepositoryReservation{BaseRef: *t.RepoBaseRef, HeadRef: *t.RepoHeadRef, Repository: *t.RepoURL}
	}
	return f
}

// subjectOf is a ticketed entry's subject generation.
func subjectOf(t *storage.Ticket) *wire.SubjectGeneration {
	return &wire.SubjectGeneration{Generation: uint64(*t.SubjectGeneration), QualifiedID: *t.QualifiedID}
}

// owns is the exact match of §3.6: every identity field and the
// repository reservation, never expires_at. A fence without a subject or a
// queue lease never owns anything.
func owns(f, stored *wire.ExecutionFence) bool {
	if stored == nil || f.Subject == nil || f.QueueLease == nil {
		return false
	}
	q, sq := f.QueueLease, stored.QueueLease
	if f.Schema != stored.Schema || f.Version != stored.Version ||
		f.WorkflowID != stored.WorkflowID || f.WorkflowGeneration != stored.WorkflowGeneration ||
		*f.Subject != *stored.Subject ||
		q.EntryID != sq.EntryID || q.OwnerID != sq.OwnerID || q.Generation != sq.Generation {
		return false
	}
	r, sr := f.Repository, stored.Repository
	if r == nil || sr == nil {
		return r == nil && sr == nil
	}
	// Case-insensitive repository (§6.15), refs exact.
	return strings.EqualFold(r.Repository, sr.Repository) && r.BaseRef == sr.BaseRef && r.HeadRef == sr.HeadRef
}

// ensureIdentity gives an old-style entry its canonical id and the next
// subject generation (§3.3), at its first v2 hand-out or when it blocks a
// v2 add. false means the entry cannot be identified (no dispatch that
// decodes, no subject, blank id).
func ensureIdentity(ctx context.Context, tx storage.Store, e *storage.Entry) (bool, error) {
	if e.Ticketed() {
		return true, nil
	}
	qid, ok := canonicalOf(e)
	if !ok {
		return false, nil
	}
	return true, setIdentity(ctx, tx, e, qid)
}

// setIdentity gives an old-style entry whose canonical id is known qid and
// the next subject generation.
func setIdentity(ctx context.Context, tx storage.Store, e *storage.Entry, qid string) error {
	gen, err := tx.NextGeneration(ctx, qid)
	if err != nil {
		return err
	}
	if err := tx.SetIdentity(ctx, e.ID, qid, gen); err != nil {
		return err
	}
	e.QualifiedID, e.SubjectGeneration = &qid, &gen
	return nil
}

// canonicalOf is the canonical id of a stored entry's subject, worked out
// from the dispatch for rows written before schema 2.
func canonicalOf(e *storage.Entry) (string, bool) {
	d, err := wire.DecodeDispatch(e.Dispatch)
	if err != nil || d.Subject == nil {
		return "", false
	}
	qid, err := d.Subject.CanonicalID()
	return qid, err == nil
}
