package subjects

import (
	"context"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// Page sizes (subject.md §7 A7): an explicit limit is clamped to
// [1, maxLimit]; no limit (or 0) means "everything", up to allCap rows per
// page with next_cursor beyond. A page also ends early near pageBytes so
// a frame never nears the daemon's 8 MiB reader limit.
const (
	maxLimit  = 1000
	allCap    = 5000
	pageBytes = 4 << 20
)

// listResult is SubjectList plus the CLI's optional total.
type listResult struct {
	Subjects   []*model.Subject `json:"subjects"`
	NextCursor string           `json:"next_cursor,omitempty"`
	FetchedAt  model.Time       `json:"fetched_at"`
	Total      int64            `json:"total"`
}

func (sc scope) list(ctx context.Context, p listParams) (*listResult, error) {
	f := p.filter
	res := &listResult{Subjects: []*model.Subject{}, FetchedAt: model.Time{Time: time.Now()}}
	kinds := sc.filterKinds(f)
	if len(kinds) == 0 {
		return res, nil
	}
	f.Kind, f.ScopeKinds = kinds, nil
	limit := f.Limit
	switch {
	case limit == 0:
		limit = allCap
	case limit > maxLimit:
		limit = maxLimit
	}
	st, err := sc.app.opened(ctx)
	if err != nil {
		return nil, err
	}
	page, err := st.List(ctx, storage.Query{Filter: f, After: p.after, Limit: limit, MaxBytes: pageBytes})
	if err != nil {
		return nil, rpcError(err, "")
	}
	res.Total = page.Total
	if len(page.Subjects) > 0 {
		res.Subjects = page.Subjects
		if page.More {
			res.NextCursor = encodeCursor(page.Subjects[len(page.Subjects)-1].Seq)
		}
	}
	return res, nil
}

// filterKinds is the kind scope of a list or watch (subject.md §7 A4):
// <kind>/… sees exactly its kind, and nothing when filter.kind names
// other kinds only (the daemon sends every requested kind to each
// per-kind call, so this avoids duplicates in its merged list);
// subject/… sees the served kinds, narrowed by filter.kind and a
// top-level kind.
func (sc scope) filterKinds(f model.Filter) []string {
	kinds := sc.kinds()
	for _, want := range [][]string{f.Kind, f.ScopeKinds} {
		if len(want) > 0 {
			kinds = slices.DeleteFunc(kinds, func(k string) bool { return !slices.Contains(want, k) })
		}
	}
	return kinds
}

// kinds is every kind this method prefix may touch.
func (sc scope) kinds() []string {
	if sc.kind != "" {
		return []string{sc.kind}
	}
	return slices.Clone(sc.app.cfg.Kinds)
}

// Cursors are opaque to callers: base64url of "s<seq>", the last row of
// the previous page (keyset paging is stable under concurrent inserts).
func encodeCursor(seq int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("s" + strconv.FormatInt(seq, 10)))
}

func decodeCursor(c string) (int64, error) {
	if c == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		if rest, ok := strings.CutPrefix(string(b), "s"); ok {
			if seq, err := strconv.ParseInt(rest, 10, 64); err == nil && seq >= 0 {
				return seq, nil
			}
		}
	}
	return 0, invalid("cursor", "cursor %q was not issued by this plugin: pass a next_cursor from a previous list, or omit it", c)
}
