package sqlitestore

import (
	"context"
	"fmt"

	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// Export reads every subject and comment in one read snapshot, for an
// operator moving the database to another backend (pgstore.Import).
func Export(ctx context.Context, s *Store) (*storage.Dump, error) {
	var d storage.Dump
	err := s.db.View(ctx, func(tx sqlitex.Querier) error {
		rows, err := tx.QueryContext(ctx, "SELECT s.native_id, "+storage.Columns+" FROM subjects s ORDER BY s.seq")
		if err != nil {
			return fmt.Errorf("subjects: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var sub storage.DumpSubject
			if err := rows.Scan(append([]any{&sub.Native}, sub.Row.Dest()...)...); err != nil {
				return fmt.Errorf("subjects: %w", err)
			}
			d.Subjects = append(d.Subjects, sub)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("subjects: %w", err)
		}
		rows.Close()
		rows, err = tx.QueryContext(ctx, `SELECT seq, subject_seq, body, created_at FROM subject_comments ORDER BY seq`)
		if err != nil {
			return fmt.Errorf("comments: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var c storage.DumpComment
			if err := rows.Scan(&c.Seq, &c.SubjectSeq, &c.Body, &c.CreatedAt); err != nil {
				return fmt.Errorf("comments: %w", err)
			}
			d.Comments = append(d.Comments, c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return &d, nil
}
