package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
)

// DefaultTTL is how long an emitted event is remembered. Slack retries for
// minutes and replays within its short redelivery window; a week also
// covers a plugin restarted from an old journal.
const DefaultTTL = 7 * 24 * time.Hour

var migrations = []sqlitex.Migration{
	{Version: 1, Name: "seen", Up: sqlitex.SQL(
		// key: "event:<event_id>" or "slack:<Ev…>"; every key of one event
		// carries that event's event_id, so an ack updates them together.
		`CREATE TABLE seen (
			key        TEXT PRIMARY KEY,
			event_id   TEXT NOT NULL,
			seen_at    INTEGER NOT NULL,
			expires_at INTEGER NOT NULL,
			ack_status TEXT,
			acked_at   INTEGER
		) WITHOUT ROWID`,
		`CREATE INDEX seen_event_id ON seen (event_id)`,
		`CREATE INDEX seen_expires_at ON seen (expires_at)`,
	)},
}

// Store is an open seen-set.
type Store struct {
	db  *sqlitex.DB
	ttl time.Duration
	now func() time.Time
}

// Options tune Open; zero values take the defaults.
type Options struct {
	TTL time.Duration
	Now func() time.Time // tests move the clock
}

// Open opens (creating if needed) the seen-set at path, migrates it and
// prunes expired entries.
func Open(ctx context.Context, path string, o Options) (*Store, error) {
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	// NORMAL in WAL mode keeps every commit atomic and survives a process
	// crash; only a power loss can forget the last claims, which costs at
	// worst a duplicate, not a lost event. FULL would fsync per event.
	db, err := sqlitex.Open(ctx, sqlitex.Options{Path: path, Synchronous: sqlitex.SyncNormal, MaxConns: 2})
	if err != nil {
		return nil, err
	}
	if _, _, err := db.Migrate(ctx, migrations); err != nil {
		db.Close()
		return nil, err
	}
	s := &Store{db: db, ttl: o.TTL, now: o.Now}
	if _, err := s.Prune(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Item is one event to claim: its event_id and all its dedup keys.
type Item struct {
	EventID string
	Keys    []string
}

// Claim decides, in one transaction, which items are new. An item is new
// when none of its keys is remembered and unexpired; new items' keys are
// inserted (replacing expired rows), so a later item in the same batch, or
// another process, sees them at once. fresh[i] reports item i.
func (s *Store) Claim(ctx context.Context, items []Item) (fresh []bool, err error) {
	now := s.now()
	nowMS, expMS := now.UnixMilli(), now.Add(s.ttl).UnixMilli()
	fresh = make([]bool, len(items))
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		for i, it := range items {
			if len(it.Keys) == 0 {
				return fmt.Errorf("store: item %q has no keys", it.EventID)
			}
			seen, err := anyLive(ctx, tx, it.Keys, nowMS)
			if err != nil {
				return err
			}
			if seen {
				continue
			}
			for _, k := range it.Keys {
				if _, err := tx.ExecContext(ctx, `INSERT INTO seen (key, event_id, seen_at, expires_at)
					VALUES (?, ?, ?, ?)
					ON CONFLICT (key) DO UPDATE SET event_id = excluded.event_id, seen_at = excluded.seen_at,
						expires_at = excluded.expires_at, ack_status = NULL, acked_at = NULL`,
					k, it.EventID, nowMS, expMS); err != nil {
					return err
				}
			}
			fresh[i] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim: %w", err)
	}
	return fresh, nil
}

func anyLive(ctx context.Context, tx *sql.Tx, keys []string, nowMS int64) (bool, error) {
	args := make([]any, 0, len(keys)+1)
	for _, k := range keys {
		args = append(args, k)
	}
	args = append(args, nowMS)
	q := `SELECT EXISTS (SELECT 1 FROM seen WHERE key IN (?` + strings.Repeat(",?", len(keys)-1) + `) AND expires_at > ?)`
	var live bool
	if err := tx.QueryRowContext(ctx, q, args...).Scan(&live); err != nil {
		return false, err
	}
	return live, nil
}

// Release forgets keys claimed for an event that could not be emitted (the
// host went away mid-write), so a redelivery is emitted by the next process.
func (s *Store) Release(ctx context.Context, keys []string) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		for _, k := range keys {
			if _, err := tx.ExecContext(ctx, `DELETE FROM seen WHERE key = ?`, k); err != nil {
				return fmt.Errorf("store: release: %w", err)
			}
		}
		return nil
	})
}

// RecordAck stores the host's ack status for an emitted event. It reports
// false when the event is unknown (never emitted here, or expired).
func (s *Store) RecordAck(ctx context.Context, eventID, status string) (bool, error) {
	var n int64
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE seen SET ack_status = ?, acked_at = ? WHERE event_id = ?`,
			status, s.now().UnixMilli(), eventID)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("store: record ack: %w", err)
	}
	return n > 0, nil
}

// AckStatus returns the recorded ack status of an event ("" if none).
func (s *Store) AckStatus(ctx context.Context, eventID string) (string, error) {
	var status sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT ack_status FROM seen WHERE event_id = ? LIMIT 1`, eventID).Scan(&status)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return status.String, err
}

// Prune deletes expired entries and returns how many went.
func (s *Store) Prune(ctx context.Context) (int64, error) {
	var n int64
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM seen WHERE expires_at <= ?`, s.now().UnixMilli())
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: prune: %w", err)
	}
	return n, nil
}
