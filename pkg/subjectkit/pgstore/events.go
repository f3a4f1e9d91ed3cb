package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// LastEventSeq is the newest change-log seq (0 when empty): a new watch
// starts after it.
func (s *Store) LastEventSeq(ctx context.Context) (int64, error) {
	var seq int64
	err := s.read(ctx, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT last_event_seq FROM meta`).Scan(&seq)
	})
	return seq, err
}

// EventsAfter returns up to limit events with seq > after, in commit
// order. Seqs are contiguous, so a jump means pruned events.
func (s *Store) EventsAfter(ctx context.Context, after int64, limit int) ([]storage.EventRow, error) {
	var out []storage.EventRow
	err := s.read(ctx, func(ctx context.Context, tx pgx.Tx) error {
		out = out[:0]
		rows, err := tx.Query(ctx, `SELECT seq, event_json FROM subject_events WHERE seq > $1
			ORDER BY seq LIMIT $2`, after, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r storage.EventRow
			var text string
			if err := rows.Scan(&r.Seq, &text); err != nil {
				return err
			}
			r.Event = []byte(text)
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}

// Follow holds a LISTEN connection until ctx ends and calls wake for
// every commit to this namespace, from any process on any host. Each
// (re)connection wakes once too, for what was committed while nobody
// listened; a lost connection is dialled again after a pause that doubles
// up to 5 s. The notifications carry nothing but the schema: what changed
// is read from the log.
func (s *Store) Follow(ctx context.Context, wake func()) {
	pause := s.retry
	schema := s.db.Schema()
	for ctx.Err() == nil {
		if s.listen(ctx, schema, wake) {
			pause = s.retry // it was up: a fresh outage starts from the short pause
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		pause = min(2*pause, maxRetry)
	}
}

// listen runs one LISTEN session until it fails or ctx ends, and reports
// whether it got as far as listening.
func (s *Store) listen(ctx context.Context, schema string, wake func()) (listened bool) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return false
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		return false
	}
	wake()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true
		}
		if n.Payload == schema {
			wake()
		}
	}
}
