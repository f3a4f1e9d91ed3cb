package sqlitestore

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// Create inserts a new subject (its ID already assigned) with its label
// rows and a created event, in one transaction.
func (s *Store) Create(ctx context.Context, sub *model.Subject, native string) (*model.Subject, error) {
	var seq int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		r, err := storage.EncodeRow(sub)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO subjects (id, native_id, kind, title, body, status,
			priority, assignee, labels, parent_id, custom_fields, native_status, status_metadata,
			attachments, url, created_at, updated_at, created_at_ns, updated_at_ns)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, native, r.Kind, r.Title, r.Body, r.Status, r.Priority, r.Assignee, r.Labels, r.Parent,
			r.Custom, r.Native, r.StatusMeta, r.Attachments, r.URL, rustjson.TimeZ(sub.CreatedAt.Time),
			rustjson.TimeZ(sub.UpdatedAt.Time), r.CreatedNS, r.UpdatedNS)
		if err != nil {
			return err
		}
		if sub.Seq, err = res.LastInsertId(); err != nil {
			return err
		}
		if err := syncLabels(ctx, tx, sub.Seq, nil, sub.Labels); err != nil {
			return err
		}
		seq, err = appendEvent(ctx, tx, model.Event{ID: sub.ID, ChangeKind: model.Created, Subject: sub})
		return err
	})
	if err != nil {
		return nil, err
	}
	s.totals.Record(seq, nil, sub)
	return sub, nil
}

// Update reads the subject with native id, lets fn compute its new state,
// and writes that state, its label rows, the comment and the event — all
// in one BEGIN IMMEDIATE transaction, so an update computed from a stale
// read can never be written (no lost label or custom-field writes, across
// goroutines or processes). visible rejects subjects outside the caller's
// scope as not found.
func (s *Store) Update(ctx context.Context, native string, visible func(*model.Subject) bool,
	fn func(old *model.Subject) (storage.Change, error)) (*model.Subject, error) {
	var before, out *model.Subject
	var seq int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		old, err := s.loadForWrite(ctx, tx, native, visible)
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
		_, err = tx.ExecContext(ctx, `UPDATE subjects SET title = ?, body = ?, status = ?, priority = ?,
			assignee = ?, labels = ?, parent_id = ?, custom_fields = ?, native_status = ?,
			status_metadata = ?, attachments = ?, url = ?, updated_at = ?, updated_at_ns = ?,
			rev = rev + 1 WHERE seq = ?`,
			r.Title, r.Body, r.Status, r.Priority, r.Assignee, r.Labels, r.Parent, r.Custom, r.Native,
			r.StatusMeta, r.Attachments, r.URL, rustjson.TimeZ(n.UpdatedAt.Time), r.UpdatedNS, n.Seq)
		if err != nil {
			return err
		}
		if err := syncLabels(ctx, tx, n.Seq, old.Labels, n.Labels); err != nil {
			return err
		}
		if c.Comment != nil {
			if _, err := tx.ExecContext(ctx, `INSERT INTO subject_comments (subject_seq, body, created_at)
				VALUES (?, ?, ?)`, n.Seq, *c.Comment, rustjson.TimeZ(n.UpdatedAt.Time)); err != nil {
				return err
			}
		}
		before, out = old, n
		seq, err = appendEvent(ctx, tx, model.Classify(old, n, s.hints))
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
	err := s.write(ctx, func(tx *sql.Tx) error {
		old, err := s.loadForWrite(ctx, tx, native, visible)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM subjects WHERE seq = ?`, old.Seq); err != nil {
			return err
		}
		out = old
		seq, err = appendEvent(ctx, tx, model.Event{ID: old.ID, ChangeKind: model.Deleted, Subject: old})
		return err
	})
	if err == nil {
		s.totals.Record(seq, out, nil)
	}
	return out, err
}

func (s *Store) loadForWrite(ctx context.Context, tx *sql.Tx, native string, visible func(*model.Subject) bool) (*model.Subject, error) {
	old, err := getOne(ctx, tx, native)
	if err != nil {
		return nil, err
	}
	if visible != nil && !visible(old) {
		return nil, storage.ErrNotFound
	}
	return old, s.fillChildren(ctx, tx, []*model.Subject{old})
}

// syncLabels brings subject_labels (the index the label filters use) in
// line with the labels column.
func syncLabels(ctx context.Context, tx *sql.Tx, seq int64, before, after []string) error {
	for _, l := range before {
		if !slices.Contains(after, l) {
			if _, err := tx.ExecContext(ctx, `DELETE FROM subject_labels WHERE seq = ? AND label = ?`, seq, l); err != nil {
				return err
			}
		}
	}
	for _, l := range after {
		if !slices.Contains(before, l) {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO subject_labels (seq, label) VALUES (?, ?)`, seq, l); err != nil {
				return err
			}
		}
	}
	return nil
}

// appendEvent writes the change-log row inside the mutation's transaction:
// its seq is the commit order, because BEGIN IMMEDIATE admits one writer
// at a time. It returns that seq.
func appendEvent(ctx context.Context, tx *sql.Tx, ev model.Event) (int64, error) {
	b, err := rustjson.Marshal(ev)
	if err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO subject_events (subject_id, kind, change_kind, event_json, created_at)
		VALUES (?, ?, ?, ?, ?)`, ev.ID, ev.Subject.Kind, string(ev.ChangeKind), string(b), rustjson.TimeZ(time.Now()))
	if err != nil {
		return 0, err
	}
	seq, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	if seq%256 == 0 { // prune now and then, not on every write
		_, err = tx.ExecContext(ctx, `DELETE FROM subject_events WHERE seq <= ?`, seq-storage.EventRetention)
	}
	return seq, err
}
