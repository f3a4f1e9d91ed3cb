package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// ErrNotEmpty is Import's refusal of a namespace that already holds
// subjects or changes.
var ErrNotEmpty = errors.New("the namespace is not empty: import only into a fresh schema")

// Import copies d into the namespace in one transaction under the
// namespace lock, keeping ids, seqs (so cursors and order carry over),
// labels and comments. A namespace that already has subjects or a change
// log is refused with nothing changed.
func (s *Store) Import(ctx context.Context, d *storage.Dump) error {
	return s.write(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var used bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM subjects) OR
			(SELECT last_event_seq FROM meta) > 0`).Scan(&used); err != nil {
			return err
		}
		if used {
			return ErrNotEmpty
		}
		subjects := make([][]any, len(d.Subjects))
		var labels [][]any
		for i, sub := range d.Subjects {
			r := sub.Row
			subjects[i] = []any{r.Seq, r.ID, sub.Native, r.Kind, r.Title, r.Body, r.Status, r.Priority, r.Assignee,
				r.Labels, r.Parent, r.Custom, r.Native, r.StatusMeta, r.Attachments, r.URL, r.CreatedNS, r.UpdatedNS}
			decoded, err := r.Subject()
			if err != nil {
				return err
			}
			for _, l := range storage.Dedupe(decoded.Labels) {
				labels = append(labels, []any{r.Seq, l})
			}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"subjects"}, []string{"seq", "id", "native_id", "kind", "title",
			"body", "status", "priority", "assignee", "labels", "parent_id", "custom_fields", "native_status",
			"status_metadata", "attachments", "url", "created_at_ns", "updated_at_ns"}, pgx.CopyFromRows(subjects)); err != nil {
			return fmt.Errorf("subjects: %w", err)
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"subject_labels"}, []string{"seq", "label"}, pgx.CopyFromRows(labels)); err != nil {
			return fmt.Errorf("labels: %w", err)
		}
		comments := make([][]any, len(d.Comments))
		for i, c := range d.Comments {
			comments[i] = []any{c.Seq, c.SubjectSeq, c.Body, c.CreatedAt}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"subject_comments"}, []string{"seq", "subject_seq", "body", "created_at"},
			pgx.CopyFromRows(comments)); err != nil {
			return fmt.Errorf("comments: %w", err)
		}
		// The import is a change the log cannot describe row by row: it
		// takes one seq with no row, so every cached total (keyed by the
		// newest seq) is stale, and a watcher open across it logs the gap
		// and the daemon re-lists.
		if _, err := tx.Exec(ctx, `UPDATE meta SET last_event_seq = last_event_seq + 1`); err != nil {
			return fmt.Errorf("meta: %w", err)
		}
		// New rows continue after the imported seqs.
		for _, t := range []string{"subjects", "subject_comments"} {
			if _, err := tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence('`+t+`', 'seq'),
				GREATEST((SELECT max(seq) FROM `+t+`), 1), (SELECT max(seq) FROM `+t+`) IS NOT NULL)`); err != nil {
				return fmt.Errorf("%s seq: %w", t, err)
			}
		}
		return nil
	})
}

// Vacuum runs VACUUM (ANALYZE) on the subject tables: after a bulk import
// the planner has no statistics and the visibility map is empty until
// autovacuum gets round to them (a minute or so), and until then the list
// total is counted by bitmap heap scans instead of index-only scans,
// about three times slower at 100,000 subjects. VACUUM cannot run inside a
// transaction, so this is its own statement, after Import committed.
func (s *Store) Vacuum(ctx context.Context) error {
	p, err := s.db.Pool(ctx)
	if err != nil {
		return wrap(ctx, err)
	}
	_, err = p.Exec(ctx, `VACUUM (ANALYZE) subjects, subject_labels, subject_comments`)
	return wrap(ctx, err)
}
