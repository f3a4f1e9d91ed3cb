package storage

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
)

// Store keeps subjects and their change log. Every mutation is one
// transaction that writes the subject, its label rows, any comment and one
// change-log row, and excludes every other writer on the same database, so
// change-log seqs are contiguous and in commit order across processes and
// hosts. Reads see one consistent snapshot.
//
// Errors: ErrNotFound for a missing or out-of-scope subject, ErrConflict
// for a uniqueness violation, *UnavailableError for a failure a retry may
// cure; errors a callback returns pass through unchanged.
type Store interface {
	// Create inserts sub (its ID already assigned; native is the id's
	// native part) with a created event, and returns it with Seq set.
	Create(ctx context.Context, sub *model.Subject, native string) (*model.Subject, error)
	// Update reads the subject with native id, lets fn compute its new
	// state from it, and writes that state, its labels, the comment and
	// the classified event, all in one transaction: a state computed from
	// a stale read is never written. visible rejects subjects outside the
	// caller's scope as ErrNotFound. fn may run again if the backend
	// retries the transaction, so it must only compute.
	Update(ctx context.Context, native string, visible func(*model.Subject) bool,
		fn func(old *model.Subject) (Change, error)) (*model.Subject, error)
	// Delete removes the subject (labels and comments go with it) and logs
	// a deleted event carrying its last state.
	Delete(ctx context.Context, native string, visible func(*model.Subject) bool) (*model.Subject, error)

	// Get returns the subject with native id, children filled.
	Get(ctx context.Context, native string) (*model.Subject, error)
	// Next is the ready subject of kinds with the highest priority (none
	// last), then the oldest; nil when there is none.
	Next(ctx context.Context, kinds []string) (*model.Subject, error)
	// List returns one page in seq order; every filter field is evaluated
	// by the database.
	List(ctx context.Context, q Query) (Page, error)
	// Comments is a subject's comment log, oldest first.
	Comments(ctx context.Context, seq int64) ([]Comment, error)

	// LastEventSeq is the newest change-log seq (0 when empty).
	LastEventSeq(ctx context.Context) (int64, error)
	// EventsAfter returns up to limit change-log rows with seq > after, in
	// commit order. A jump in seq means pruned rows.
	EventsAfter(ctx context.Context, after int64, limit int) ([]EventRow, error)
	// Follow runs until ctx ends, calling wake whenever another process
	// may have committed a change (a hint only: the change log is the
	// record, and watches also poll it). A backend that cannot be told
	// returns at once.
	Follow(ctx context.Context, wake func())

	Ping(ctx context.Context) error
	Close() error
}

// Query is one list page request.
type Query struct {
	Filter   model.Filter // every field is a predicate; Cursor and Limit are ignored
	After    int64        // keyset: only seq > After
	Limit    int          // page size (> 0)
	MaxBytes int          // stop early once the page's text is this large (0 = no bound)
}

// Page is one list page.
type Page struct {
	Subjects []*model.Subject
	More     bool  // rows remain after the last subject
	Total    int64 // matches ignoring the cursor
}

// Change is what an update computes from the current state.
type Change struct {
	New     *model.Subject
	Comment *string // appended to the comment log
}

// Comment is one entry of a subject's comment log.
type Comment struct {
	Seq       int64  `json:"seq"`
	Body      string `json:"body"`
	CreatedAt string `json:"created_at"`
}

// EventRow is one change-log entry.
type EventRow struct {
	Seq   int64
	Event json.RawMessage // SubjectChangedEvent
}

// ErrNotFound is a missing subject (or one outside the caller's scope).
var ErrNotFound = errors.New("subject not found")

// ErrConflict is a write that would break a uniqueness rule.
var ErrConflict = errors.New("the change conflicts with an existing subject")

// UnavailableError is a failure a retry may cure: another process held
// the database past the lock timeout, or it cannot be reached. The host
// sees "backend unavailable: <Reason>"; Err goes to the log.
type UnavailableError struct {
	Reason string
	Err    error
}

func (e *UnavailableError) Error() string { return e.Reason + ": " + e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

// EventRetention is how many change-log rows a backend keeps at least; a
// watcher further behind has lost events (logged) and the daemon re-lists.
const EventRetention = 10_000
