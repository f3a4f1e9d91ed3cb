package pgstore

import (
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// Create inserts a new subject (its ID already assigned) with its label
// rows and a created event, in one transaction.
func (s *Store) Create(ctx context.Context, sub *model.Subject, native string) (*model.Subject, error) {
	r, err := storage.EncodeRow(sub)
	if err != nil {
		return nil, err
	}
	var seq int64
	err = s.write(ctx, func(ctx context.Context, tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO subjects (id, native_id, kind, title, body, status,
			priority, assignee, labels, parent_id, custom_fields, native_status, status_metadata,
			attachments, url, created_at_ns, updated_at_ns)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) RETURNING seq`,
			r.ID, native, r.Kind, r.Title, r.Body, r.Status, r.Priority, r.Assignee, r.Labels, r.Parent,
			r.Custom, r.Native, r.StatusMeta, r.Attachments, r.URL, r.CreatedNS, r.UpdatedNS).Scan(&sub.Seq)
		if err != nil {
			return err
		}
		if err := syncLabels(ctx, tx, sub.Seq, nil, sub.Labels); err != nil {
			return err
		}
		seq, err = s.appendEvent(ctx, tx, model.Event{ID: sub.ID, ChangeKind: model.Created, Subject: sub})
		return err
	})
	if err != nil {
		return nil, err
	}
	s.totals.Record(seq, nil, sub)
	return sub, nil
}

// Update reads the subject, lets fn compute its new state and writes it,
// its labels, the comment and the event, all under the namespace lock.
func (s *Store) Update(ctx context.Context, native string, visible func(*model.Subject) bool,
	fn func(old *model.Subject) (storage.Change, error)) (*model.Subject, error) {
	var before, out *model.Subject
	var seq int64
	err := s.write(ctx, func(ctx context.Context, tx pgx.Tx) error {
		old, err := loadForWrite(ctx, tx, native, visible)
		if err != nil {
			return err
		}
		c, err := fn(old)
		if err != nil {
			return err
		}
		n, r, err := storage.Successor(old, c)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE subjects SET title = $1, body = $2, status = $3, priority = $4,
			assignee = $5, labels = $6, parent_id = $7, custom_fields = $8, native_status = $9,
			status_metadata = $10, attachments = $11, url = $12, updated_at_ns = $13, rev = rev + 1
			WHERE seq = $14`,
			r.Title, r.Body, r.Status, r.Priority, r.Assignee, r.Labels, r.Parent, r.Custom, r.Native,
			r.StatusMeta, r.Attachments, r.URL, r.UpdatedNS, n.Seq)
		if err != nil {
			return err
		}
		if err := syncLabels(ctx, tx, n.Seq, old.Labels, n.Labels); err != nil {
			return err
		}
		if c.Comment != nil {
			if _, err := tx.Exec(ctx, `INSERT INTO subject_comments (subject_seq, body, created_at)
				VALUES ($1, $2, $3)`, n.Seq, *c.Comment, rustjson.TimeZ(n.UpdatedAt.Time)); err != nil {
				return err
			}
		}
		before, out = old, n
		seq, err = s.appendEvent(ctx, tx, model.Classify(old, n, s.hints))
		return err
	})
	if err == nil {
		s.totals.Record(seq, before, out)
	}
	return out, err
}

// Delete removes the subject (its labels and comments cascade) and logs a
// deleted event carrying its last state.
func (s *Store) Delete(ctx context.Context, native string, visible func(*model.Subject) bool) (*model.Subject, error) {
	var out *model.Subject
	var seq int64
	err := s.write(ctx, func(ctx context.Context, tx pgx.Tx) error {
		old, err := loadForWrite(ctx, tx, native, visible)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM subjects WHERE seq = $1`, old.Seq); err != nil {
			return err
		}
		out = old
		seq, err = s.appendEvent(ctx, tx, model.Event{ID: old.ID, ChangeKind: model.Deleted, Subject: old})
		return err
	})
	if err == nil {
		s.totals.Record(seq, out, nil)
	}
	return out, err
}

func loadForWrite(ctx context.Context, tx pgx.Tx, native string, visible func(*model.Subject) bool) (*model.Subject, error) {
	old, err := getOne(ctx, tx, native)
	if err != nil {
		return nil, err
	}
	if visible != nil && !visible(old) {
		return nil, storage.ErrNotFound
	}
	return old, fillChildren(ctx, tx, []*model.Subject{old})
}

// syncLabels brings subject_labels (the index the label filters use) in
// line with the labels column.
func syncLabels(ctx context.Context, tx pgx.Tx, seq int64, before, after []string) error {
	var gone, added []string
	for _, l := range before {
		if !slices.Contains(after, l) {
			gone = append(gone, l)
		}
	}
	for _, l := range after {
		if !slices.Contains(before, l) {
			added = append(added, l)
		}
	}
	if len(gone) > 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM subject_labels WHERE seq = $1 AND label = ANY($2)`, seq, gone); err != nil {
			return err
		}
	}
	if len(added) > 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO subject_labels (seq, label) SELECT $1, unnest($2::text[])
			ON CONFLICT DO NOTHING`, seq, added); err != nil {
			return err
		}
	}
	return nil
}

// appendEvent writes the change-log row with the next seq from meta (the
// namespace lock is held, so seqs follow commit order) and queues the
// NOTIFY that commit delivers. Now and then it prunes old rows. It
// returns the seq.
func (s *Store) appendEvent(ctx context.Context, tx pgx.Tx, ev model.Event) (int64, error) {
	b, err := rustjson.Marshal(ev)
	if err != nil {
		return 0, err
	}
	var seq int64
	if err := tx.QueryRow(ctx, `UPDATE meta SET last_event_seq = last_event_seq + 1 RETURNING last_event_seq`).Scan(&seq); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO subject_events (seq, subject_id, kind, change_kind, event_json, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, seq, ev.ID, ev.Subject.Kind, string(ev.ChangeKind), string(b),
		rustjson.TimeZ(time.Now())); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, current_schema())`, Channel); err != nil {
		return 0, err
	}
	if seq%256 == 0 { // prune now and then, not on every write
		_, err = tx.Exec(ctx, `DELETE FROM subject_events WHERE seq <= $1`, seq-storage.EventRetention)
	}
	return seq, err
}
