package pgstore

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// args collects query arguments and names their placeholders ($n).
type args []any

func (a *args) Arg(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// In and AttachmentKind make args the PostgreSQL storage.Dialect.
func (a *args) In(col string, vals []string) string {
	return col + " = ANY(" + a.Arg(vals) + "::text[])"
}

func (a *args) AttachmentKind(ph string) string {
	return "EXISTS (SELECT 1 FROM json_array_elements(s.attachments::json) x WHERE x->>'kind' = " + ph + ")"
}

// List returns one page in seq order, with exact keyset paging, and the
// total, all from one snapshot.
func (s *Store) List(ctx context.Context, q storage.Query) (storage.Page, error) {
	var p storage.Page
	err := s.read(ctx, func(ctx context.Context, tx pgx.Tx) error {
		p = storage.Page{}
		var a args
		cond := storage.Where(&q.Filter, s.hints, &a)
		var err error
		if p.Total, err = s.total(ctx, tx, &q.Filter, cond, a); err != nil {
			return err
		}
		sql := "SELECT " + storage.Columns + " FROM subjects s WHERE " + cond + " AND s.seq > " + a.Arg(q.After) +
			" ORDER BY s.seq LIMIT " + a.Arg(q.Limit+1)
		rows, err := tx.Query(ctx, sql, a...)
		if err != nil {
			return err
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
				return err
			}
			size += storage.ApproxSize(sub)
			p.Subjects = append(p.Subjects, sub)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		return fillChildren(ctx, tx, p.Subjects)
	})
	return p, err
}

// total counts the matches of cond (the clause of f), or answers from the
// cache (see storage.Totals): the generation is read in the same snapshot
// as the count, as Totals needs.
func (s *Store) total(ctx context.Context, tx pgx.Tx, f *model.Filter, cond string, a args) (int64, error) {
	var gen int64
	if err := tx.QueryRow(ctx, `SELECT last_event_seq FROM meta`).Scan(&gen); err != nil {
		return 0, err
	}
	key := storage.TotalsKey(cond, a)
	if n, ok := s.totals.Get(gen, key, f, s.hints); ok {
		return n, nil
	}
	var n int64
	if err := tx.QueryRow(ctx, "SELECT count(*) FROM subjects s WHERE "+cond, a...).Scan(&n); err != nil {
		return 0, err
	}
	s.totals.Put(gen, key, n)
	return n, nil
}

func scanRow(r pgx.Row) (*model.Subject, error) {
	var row storage.Row
	if err := r.Scan(row.Dest()...); err != nil {
		return nil, err
	}
	return row.Subject()
}

// Get returns the subject with native id (the ULID).
func (s *Store) Get(ctx context.Context, native string) (*model.Subject, error) {
	var sub *model.Subject
	err := s.read(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		if sub, err = getOne(ctx, tx, native); err != nil {
			return err
		}
		return fillChildren(ctx, tx, []*model.Subject{sub})
	})
	return sub, err
}

func getOne(ctx context.Context, tx pgx.Tx, native string) (*model.Subject, error) {
	return scanRow(tx.QueryRow(ctx, "SELECT "+storage.Columns+" FROM subjects s WHERE s.native_id = $1", native))
}

// Next returns the ready subject of the given kinds with the highest
// priority (none last, as SQLite orders NULL), then the oldest.
func (s *Store) Next(ctx context.Context, kinds []string) (*model.Subject, error) {
	var sub *model.Subject
	err := s.read(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		sub, err = scanRow(tx.QueryRow(ctx, "SELECT "+storage.Columns+` FROM subjects s WHERE s.kind = ANY($1::text[])
			AND s.status = 'ready' ORDER BY s.priority DESC NULLS LAST, s.seq LIMIT 1`, kinds))
		if err == pgx.ErrNoRows {
			sub = nil
			return nil
		}
		if err != nil {
			return err
		}
		return fillChildren(ctx, tx, []*model.Subject{sub})
	})
	return sub, err
}

// fillChildren computes children from parent_id in one query.
func fillChildren(ctx context.Context, tx pgx.Tx, subs []*model.Subject) error {
	if len(subs) == 0 {
		return nil
	}
	byID := make(map[string]*model.Subject, len(subs))
	ids := make([]string, 0, len(subs))
	for _, sub := range subs {
		byID[sub.ID] = sub
		ids = append(ids, sub.ID)
	}
	rows, err := tx.Query(ctx, `SELECT parent_id, id FROM subjects WHERE parent_id = ANY($1::text[]) ORDER BY seq`, ids)
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
	out := []storage.Comment{}
	err := s.read(ctx, func(ctx context.Context, tx pgx.Tx) error {
		out = out[:0]
		rows, err := tx.Query(ctx, `SELECT seq, body, created_at FROM subject_comments
			WHERE subject_seq = $1 ORDER BY seq`, seq)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c storage.Comment
			if err := rows.Scan(&c.Seq, &c.Body, &c.CreatedAt); err != nil {
				return err
			}
			out = append(out, c)
		}
		return rows.Err()
	})
	return out, err
}
