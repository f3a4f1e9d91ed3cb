package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// sqliteArgs is the SQLite storage.Dialect: positional ? placeholders.
type sqliteArgs []any

func (a *sqliteArgs) Arg(v any) string {
	*a = append(*a, v)
	return "?"
}

func (a *sqliteArgs) In(col string, vals []string) string {
	ph := make([]string, len(vals))
	for i, v := range vals {
		ph[i] = a.Arg(v)
	}
	return col + " IN (" + strings.Join(ph, ", ") + ")"
}

func (a *sqliteArgs) AttachmentKind(ph string) string {
	return "EXISTS (SELECT 1 FROM json_each(s.attachments) a WHERE json_extract(a.value, '$.kind') = " + ph + ")"
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// List returns one page in seq order, with exact keyset paging: every
// filter is in SQL, so pages are full and the cursor is the last row.
func (s *Store) List(ctx context.Context, q storage.Query) (storage.Page, error) {
	var a sqliteArgs
	cond := storage.Where(&q.Filter, s.hints, &a)
	args := []any(a)
	var p storage.Page
	var err error
	if p.Total, err = s.total(ctx, &q.Filter, cond, args); err != nil {
		return p, err
	}
	rows, err := s.db.QueryContext(ctx, "SELECT "+storage.Columns+" FROM subjects s WHERE "+cond+
		" AND s.seq > ? ORDER BY s.seq LIMIT ?", append(args, q.After, q.Limit+1)...)
	if err != nil {
		return p, err
	}
	defer rows.Close()
	size := 0
	for rows.Next() {
		if len(p.Subjects) == q.Limit || (q.MaxBytes > 0 && size >= q.MaxBytes) {
			p.More = true
			break
		}
		sub, err := scanRow(rows)
		if err != nil {
			return p, err
		}
		size += storage.ApproxSize(sub)
		p.Subjects = append(p.Subjects, sub)
	}
	if err := rows.Err(); err != nil {
		return p, err
	}
	rows.Close()
	return p, s.fillChildren(ctx, s.db, p.Subjects)
}

// Get returns the subject with native id (the ULID).
func (s *Store) Get(ctx context.Context, native string) (*model.Subject, error) {
	sub, err := getOne(ctx, s.db, native)
	if err != nil {
		return nil, err
	}
	return sub, s.fillChildren(ctx, s.db, []*model.Subject{sub})
}

func getOne(ctx context.Context, q querier, native string) (*model.Subject, error) {
	sub, err := scanRow(q.QueryRowContext(ctx, "SELECT "+storage.Columns+" FROM subjects s WHERE s.native_id = ?", native))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, storage.ErrNotFound
	}
	return sub, err
}

// Next returns the ready subject of the given kinds with the highest
// priority (none last), then the oldest; nil when there is none.
func (s *Store) Next(ctx context.Context, kinds []string) (*model.Subject, error) {
	args := make([]any, len(kinds))
	for i, k := range kinds {
		args[i] = k
	}
	sub, err := scanRow(s.db.QueryRowContext(ctx, "SELECT "+storage.Columns+" FROM subjects s WHERE s.kind IN ("+
		placeholders(len(kinds))+") AND s.status = 'ready' ORDER BY s.priority DESC, s.seq LIMIT 1", args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return sub, s.fillChildren(ctx, s.db, []*model.Subject{sub})
}

// fillChildren computes children from parent_id in one query.
func (s *Store) fillChildren(ctx context.Context, q querier, subs []*model.Subject) error {
	if len(subs) == 0 {
		return nil
	}
	byID := make(map[string]*model.Subject, len(subs))
	args := make([]any, 0, len(subs))
	for _, sub := range subs {
		byID[sub.ID] = sub
		args = append(args, sub.ID)
	}
	// INDEXED BY: when few subjects have parents, ANALYZE tells the planner
	// the parent index is useless (nearly all NULL), and it would rather
	// scan the whole table in seq order than sort a handful of rows.
	rows, err := q.QueryContext(ctx, "SELECT parent_id, id FROM subjects INDEXED BY subjects_parent WHERE parent_id IN ("+
		placeholders(len(args))+") ORDER BY seq", args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var parent, id string
		if err := rows.Scan(&parent, &id); err != nil {
			return err
		}
		byID[parent].Children = append(byID[parent].Children, id)
	}
	return rows.Err()
}

// Comments returns the comment log of a subject, oldest first.
func (s *Store) Comments(ctx context.Context, seq int64) ([]storage.Comment, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, body, created_at FROM subject_comments
		WHERE subject_seq = ? ORDER BY seq`, seq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []storage.Comment{}
	for rows.Next() {
		var c storage.Comment
		if err := rows.Scan(&c.Seq, &c.Body, &c.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// total counts the matches of cond (the clause of f), or answers from
// the cache (storage.Totals). A count and its generation come from one
// statement, so one snapshot: the cache may bring a total forward by the
// change-log rows after its generation, so the generation must be exactly
// the one counted at.
func (s *Store) total(ctx context.Context, f *model.Filter, cond string, args []any) (int64, error) {
	gen, err := s.LastEventSeq(ctx)
	if err != nil {
		return 0, err
	}
	key := storage.TotalsKey(cond, args)
	if n, ok := s.totals.Get(gen, key, f, s.hints); ok {
		return n, nil
	}
	var n int64
	if err := s.db.QueryRowContext(ctx, "SELECT (SELECT COALESCE(MAX(seq), 0) FROM subject_events), COUNT(*) FROM subjects s WHERE "+cond,
		args...).Scan(&gen, &n); err != nil {
		return 0, err
	}
	s.totals.Put(gen, key, n)
	return n, nil
}
