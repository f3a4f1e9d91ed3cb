package storage

// Entry is one live queue entry as stored.
type Entry struct {
	ID              string
	Ordinal         int64
	State           string // pending, assigned or held
	SubjectKey      string
	TaskID          *string
	WorkflowRef     string
	WorkflowID      *string
	EnqueuedAt      string
	AssignedAt      *string
	HeldAt          *string
	RunAt           *string // verbatim
	RunAtNS         *int64  // nil when absent or unparseable
	ExpireAfterSecs *string // decimal u64
	ExpireAtNS      *int64  // nil = never
	LeaseExpiresNS  *int64
	Dispatch        []byte // canonical SubjectDispatch JSON

	// Since schema 2.
	AssignedAtNS *int64
	Ticket
}

// Ticket is the generation-fenced identity of an entry (queue 0.4.0);
// SubjectGeneration is nil for an old-style entry.
type Ticket struct {
	QualifiedID        *string
	SubjectGeneration  *int64
	WorkflowGeneration *int64
	LeaseOwner         *string
	LeaseGeneration    int64
	LeaseExpiresAt     *string
	RepoURL            *string
	RepoBaseRef        *string
	RepoHeadRef        *string
	RepoCollisionKey   *string
}

// Ticketed reports whether the entry has a subject generation.
func (e *Entry) Ticketed() bool { return e.SubjectGeneration != nil }

// Finished is a ticketed entry that left the queue, with the fence it had.
type Finished struct {
	ID         string
	WorkflowID *string
	Ticket
	Outcome    string // completed, failed, cancelled or dropped
	FinishedBy string
}

// Counts are the per-state counts of the whole queue.
type Counts struct {
	Pending, Assigned, Held, Deferred uint64
}

// Total is every live entry.
func (c Counts) Total() uint64 { return c.Pending + c.Assigned + c.Held }

// Audit is one recorded status transition.
type Audit struct {
	Seq        int64
	EntryID    string
	SubjectKey string
	At         string // wire timestamp
	AtNS       int64
	Method     string
	From       *string // nil for enqueue
	To         string  // pending, assigned, held, completed, failed, cancelled, dropped, expired
	WorkflowID *string
	Reason     *string
}

// Binding is an idempotency key bound to an entry and a request hash.
type Binding struct {
	EntryID, RequestHash string
}

// Position is an entry id with its ordinal.
type Position struct {
	ID      string
	Ordinal int64
}
