package storage

import "time"

// Dump is everything one durable step log holds, as plain rows: what an
// operator moves from one backend to another (sqlitestore.Export,
// pgstore's Import).
type Dump struct {
	// The meta counters: the highest epoch and commit sequence number
	// ever allocated (above every row's: allocations of rolled-back or
	// re-registered work leave gaps).
	LastEpoch, LastCommitSeq int64
	Runs                     []RunRow  // by (run_id, phase_id), in byte order
	Steps                    []StepRow // every state, by step_id in byte order
}

// RunRow is a whole runs row.
type RunRow struct {
	RunID, PhaseID       string
	Epoch                int64
	Inputs               []byte // compact JSON; nil when absent
	CreatedAt, UpdatedAt time.Time
}

// StepRow is a whole steps row: Step (Outcome "" when NULL) plus the
// columns the log's reads do not return; nil means NULL.
type StepRow struct {
	Step
	CommittedAt   *time.Time
	CommitSeq     *int64
	ReleasedAt    *time.Time
	ReleaseReason *string
	SupersededBy  *string
}
