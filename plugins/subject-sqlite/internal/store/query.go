package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"

	"github.com/animus-plugins/animus-plugins/plugins/subject-sqlite/internal/model"
)

// Query is one list page request.
type Query struct {
	Filter   model.Filter // every field is a predicate; Cursor and Limit are ignored
	After    int64        // keyset: only seq > After
	Limit    int          // page size (> 0)
	MaxBytes int          // stop early once the page's text is this large (0 = no bound)
}

// Page is one list page.
type Page struct {
	Subjects []*model.Subject
	More     bool  // rows remain after the last subject
	Total    int64 // matches ignoring the cursor
}

// where renders f as a WHERE clause over subjects s. It must agree with
// model.Filter.Match field for field.
func where(f *model.Filter, hints model.Hints) (string, []any) {
	var conds []string
	var args []any
	in := func(col string, vals []string) {
		conds = append(conds, col+" IN ("+placeholders(len(vals))+")")
		for _, v := range vals {
			args = append(args, v)
		}
	}
	if len(f.Kind) > 0 {
		in("s.kind", f.Kind)
	}
	if len(f.ScopeKinds) > 0 {
		in("s.kind", f.ScopeKinds)
	}
	if len(f.Status) > 0 {
		st := make([]string, len(f.Status))
		for i, s := range f.Status {
			st[i] = string(s)
		}
		in("s.status", st)
	}
	if len(f.Assignee) > 0 {
		in("s.assignee", f.Assignee)
	}
	if len(f.LabelsAny) > 0 {
		conds = append(conds, "EXISTS (SELECT 1 FROM subject_labels l WHERE l.seq = s.seq AND l.label IN ("+placeholders(len(f.LabelsAny))+"))")
		for _, l := range f.LabelsAny {
			args = append(args, l)
		}
	}
	if all := dedupe(f.LabelsAll); len(all) > 0 {
		conds = append(conds, "(SELECT COUNT(*) FROM subject_labels l WHERE l.seq = s.seq AND l.label IN ("+placeholders(len(all))+")) = ?")
		for _, l := range all {
			args = append(args, l)
		}
		args = append(args, len(all))
	}
	if f.UpdatedSince != nil {
		conds = append(conds, "s.updated_at_ns >= ?")
		args = append(args, f.UpdatedSince.UnixNano())
	}
	if f.NativeStatus != nil {
		conds = append(conds, "s.native_status = ?")
		args = append(args, *f.NativeStatus)
	}
	if f.DispatchLabel != nil {
		// Labels are derived from native statuses through the configured
		// hints, so the filter is a native_status set (empty: no match).
		if natives := hints.NativesWithLabel(*f.DispatchLabel); len(natives) > 0 {
			in("s.native_status", natives)
		} else {
			conds = append(conds, "0")
		}
	}
	if f.HasAttachmentKind != nil {
		// IS NOT NULL lets the partial index subjects_attachments skip the
		// (usually many) subjects without attachments.
		conds = append(conds, "s.attachments IS NOT NULL AND EXISTS (SELECT 1 FROM json_each(s.attachments) a WHERE json_extract(a.value, '$.kind') = ?)")
		args = append(args, *f.HasAttachmentKind)
	}
	if len(conds) == 0 {
		return "1", nil
	}
	return strings.Join(conds, " AND "), args
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func dedupe(in []string) []string {
	var out []string
	for _, s := range in {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// List returns one page in seq order, with exact keyset paging: every
// filter is in SQL, so pages are full and the cursor is the last row.
func (s *Store) List(ctx context.Context, q Query) (Page, error) {
	cond, args := where(&q.Filter, s.hints)
	var p Page
	var err error
	if p.Total, err = s.total(ctx, cond, args); err != nil {
		return p, err
	}
	rows, err := s.db.QueryContext(ctx, "SELECT "+columns+" FROM subjects s WHERE "+cond+
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
		size += approxSize(sub)
		p.Subjects = append(p.Subjects, sub)
	}
	if err := rows.Err(); err != nil {
		return p, err
	}
	rows.Close()
	return p, s.fillChildren(ctx, s.db, p.Subjects)
}

// approxSize estimates a subject's encoded size, enough to keep a page
// far below the daemon's 8 MiB frame limit.
func approxSize(s *model.Subject) int {
	n := 300 + len(s.Title) + len(s.StatusMetadata)
	if s.Description != nil {
		n += len(*s.Description)
	}
	for _, v := range s.Custom {
		n += len(v) + 20
	}
	for _, l := range s.Labels {
		n += len(l) + 3
	}
	for _, a := range s.Attachments {
		n += 100 + len(a.URI) + len(a.Metadata)
	}
	return n
}

// Get returns the subject with native id (the ULID).
func (s *Store) Get(ctx context.Context, native string) (*model.Subject, error) {
	sub, err := getOne(ctx, s.db, native)
	if err != nil {
		return nil, err
	}
	return sub, s.fillChildren(ctx, s.db, []*model.Subject{sub})
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func getOne(ctx context.Context, q querier, native string) (*model.Subject, error) {
	sub, err := scanRow(q.QueryRowContext(ctx, "SELECT "+columns+" FROM subjects s WHERE s.native_id = ?", native))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
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
	sub, err := scanRow(s.db.QueryRowContext(ctx, "SELECT "+columns+" FROM subjects s WHERE s.kind IN ("+
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

// Comment is one entry of a subject's comment log.
type Comment struct {
	Seq       int64  `json:"seq"`
	Body      string `json:"body"`
	CreatedAt string `json:"created_at"`
}

// Comments returns the comment log of a subject, oldest first.
func (s *Store) Comments(ctx context.Context, seq int64) ([]Comment, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, body, created_at FROM subject_comments
		WHERE subject_seq = ? ORDER BY seq`, seq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Comment{}
	for rows.Next() {
		var c Comment
		if err := rows.Scan(&c.Seq, &c.Body, &c.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
