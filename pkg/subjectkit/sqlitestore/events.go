package sqlitestore

import (
	"context"
	"encoding/json"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// LastEventSeq is the newest change-log seq (0 when empty): a new watch
// starts after it.
func (s *Store) LastEventSeq(ctx context.Context) (int64, error) {
	var seq int64
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM subject_events`).Scan(&seq)
	return seq, err
}

// EventsAfter returns up to limit events with seq > after, in commit
// order. Seqs are contiguous (a rolled-back transaction gives its seq
// back), so a jump means pruned events.
func (s *Store) EventsAfter(ctx context.Context, after int64, limit int) ([]storage.EventRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, event_json FROM subject_events WHERE seq > ?
		ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []storage.EventRow
	for rows.Next() {
		var r storage.EventRow
		var text string
		if err := rows.Scan(&r.Seq, &text); err != nil {
			return nil, err
		}
		r.Event = json.RawMessage(text)
		out = append(out, r)
	}
	return out, rows.Err()
}
