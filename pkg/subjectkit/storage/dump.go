package storage

// Dump is a whole subject database, for moving it between backends
// (sqlitestore.Export → pgstore.Import). The change log is not part of it:
// it only feeds live watches, and a watch never spans the move.
type Dump struct {
	Subjects []DumpSubject // in seq order
	Comments []DumpComment // in seq order
}

// DumpSubject is one subject row with its native id.
type DumpSubject struct {
	Native string
	Row    Row
}

// DumpComment is one comment-log entry.
type DumpComment struct {
	Seq, SubjectSeq int64
	Body, CreatedAt string
}
