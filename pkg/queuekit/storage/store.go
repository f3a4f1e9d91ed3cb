package storage

import "context"

// Store is one queue's storage. The Store handed to an Update or View
// callback is bound to that transaction: everything it reads and writes
// commits or rolls back together. A View callback only reads.
//
// It is the only interface of the queue kit, with exactly two
// implementations (sqlitestore and pgstore).
type Store interface {
	// Update runs fn in one read-write transaction that excludes every
	// other writer of the queue. A backend may run fn again after a
	// failure that left nothing committed (serialization failure, a
	// connection lost before COMMIT), so fn must not have effects
	// outside the transaction.
	Update(ctx context.Context, fn func(tx Store) error) error
	// View runs fn in one consistent read snapshot.
	View(ctx context.Context, fn func(tx Store) error) error
	Ping(ctx context.Context) error
	Close() error

	// Live entries.
	Get(ctx context.Context, id string) (*Entry, error)
	Insert(ctx context.Context, e *Entry) error // appends at the tail; sets e.Ordinal
	Save(ctx context.Context, e *Entry) error   // the fields a transition changes
	Delete(ctx context.Context, id string) error
	SetOrdinal(ctx context.Context, id string, ordinal int64) error
	SetIdentity(ctx context.Context, id, qid string, generation int64) error
	// Finish removes a live entry; a ticketed one is kept as Finished.
	Finish(ctx context.Context, id, outcome, at, by string) error
	// SweepExpired removes the pending entries whose expiry instant is
	// strictly before nowNS, auditing each as expired; returns how many.
	SweepExpired(ctx context.Context, nowNS int64, at, method string) (int64, error)

	// Queue-wide reads.
	Counts(ctx context.Context, nowNS int64) (Counts, error)
	CountSubject(ctx context.Context, key string) (int, error)
	// List returns entries in queue order whose state is one of states
	// (all when empty), after offset, at most limit (nil = no limit),
	// and how many match before paging.
	List(ctx context.Context, states []string, limit *uint64, offset uint64) ([]*Entry, uint64, error)
	// Leasable walks, in queue order, the old-style pending entries due
	// at nowNS and (reclaimBefore set) the old-style assigned entries
	// leased at or before it, until fn returns false. fn must not write.
	Leasable(ctx context.Context, nowNS int64, reclaimBefore *int64, fn func(*Entry) bool) error
	Prefix(ctx context.Context, maxOrdinal int64) ([]Position, error)
	NextRunAt(ctx context.Context, nowNS int64) (*string, error)

	// Generation-fenced tickets (queue 0.4.0).
	LiveTicketed(ctx context.Context, qid string) (*Entry, error)
	OldStyleOf(ctx context.Context, qid string) ([]*Entry, error)
	// V2Candidates returns up to limit due pending entries in queue
	// order. A backend with row locks skips rows another transaction
	// holds.
	V2Candidates(ctx context.Context, nowNS int64, limit int) ([]*Entry, error)
	AssignedCollision(ctx context.Context, key string) (*Entry, error)
	GetFinished(ctx context.Context, id string) (*Finished, error)
	NextGeneration(ctx context.Context, qid string) (int64, error)
	GetBinding(ctx context.Context, key string) (*Binding, error)
	Bind(ctx context.Context, key, entryID, hash, at string) error

	// Audit trail.
	Record(ctx context.Context, a Audit) error
	PruneAudit(ctx context.Context, cutoffNS int64, limit int) error
	AuditTrail(ctx context.Context, entryID string, limit int) ([]Audit, error)
}

// UnavailableError is a failure a retry may cure: another process held
// the queue past the lock timeout, or the database cannot be reached. The
// host sees -32205 with Reason as the message; Err goes to the log.
type UnavailableError struct {
	Reason string
	Err    error
}

func (e *UnavailableError) Error() string { return e.Reason + ": " + e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }
