package storage

// Dump is everything one queue database holds, as plain rows: what an
// operator moves from one backend to another (sqlitestore.Export,
// pgstore's Import). Derived data (per-state counts, identity sequences)
// is not part of it; the importer rebuilds it.
type Dump struct {
	Entries     []*Entry      // live entries with their ordinals, in queue order
	Audit       []Audit       // the audit trail with its seq, in seq order
	Finished    []FinishedRow // finished ticketed entries, by entry id
	Generations []Generation  // subject generation counters, by qualified id
	Bindings    []BindingRow  // idempotency bindings, by key
}

// FinishedRow is a whole finished_entries row: Finished plus the columns
// the queue's reads do not need. Ticket.RepoCollisionKey is not kept for
// a finished entry and stays nil.
type FinishedRow struct {
	Finished
	SubjectKey string
	FinishedAt string // wire timestamp
}

// Generation is the highest subject generation ever allocated for a
// canonical id.
type Generation struct {
	QualifiedID    string
	LastGeneration int64
}

// BindingRow is a whole idempotency_bindings row.
type BindingRow struct {
	Key string
	Binding
	BoundAt string // wire timestamp
}
