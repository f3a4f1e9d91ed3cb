package sqlitex

import (
	"context"
	"database/sql"
	"fmt"
)

// Writer runs a process's write transactions one at a time on one pinned
// connection, each at the synchronous level it asks for.
//
// Why one connection: SQLite discards a connection's whole page cache when
// it finds that another connection committed since its last transaction
// (in WAL mode, a changed WAL-index header). A store that wrote through two
// pools (FULL commits for what it acknowledges, NORMAL for bookkeeping)
// re-read every page it touched at the start of each transaction that
// followed one of the other pool's: notifier-webhook's enqueue spent ~45 µs
// of its ~300 µs that way. On one connection the cache stays warm, and the
// level is a PRAGMA issued only when it changes (it takes effect at the
// next commit).
//
// Writers of one process queue here, in Go, instead of in SQLite's busy
// handler, which sleeps a millisecond or more per retry. Other processes
// still meet at BEGIN IMMEDIATE as before.
type Writer struct {
	turn  chan struct{} // holds one token while a transaction runs
	conn  *sql.Conn
	level Synchronous // the connection's current PRAGMA synchronous
}

// Writer pins one of db's connections for writing. Its level starts at the
// one db was opened with. The caller closes it before db.
func (db *DB) Writer(ctx context.Context) (*Writer, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	var level int
	if err := conn.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&level); err != nil {
		conn.Close()
		return nil, err
	}
	w := &Writer{turn: make(chan struct{}, 1), conn: conn}
	switch level {
	case 1:
		w.level = SyncNormal
	case 2:
		w.level = SyncFull
	}
	return w, nil
}

// Tx runs fn in one BEGIN IMMEDIATE transaction committed at level, or
// rolled back if fn returns an error or panics. It waits for the process's
// other write transactions first, or until ctx ends.
//
// Once its turn has come, the transaction runs to its end: fn gets ctx
// without its cancellation and should run its statements on it.
// go-sqlite3 runs a statement given a cancellable context on a goroutine
// of its own, so that it can interrupt it, and database/sql watches a
// transaction's cancellable context with another: hand-offs on every
// statement of a few microseconds each. ctx is still honoured up to BEGIN.
func (w *Writer) Tx(ctx context.Context, level Synchronous, fn func(ctx context.Context, tx *sql.Tx) error) error {
	select {
	case w.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-w.turn }()
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	if level != w.level {
		if level != SyncFull && level != SyncNormal {
			return fmt.Errorf("sqlitex: no synchronous level %q", level)
		}
		if _, err := w.conn.ExecContext(ctx, "PRAGMA synchronous = "+string(level)); err != nil {
			return err
		}
		w.level = level
	}
	tx, err := w.conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	return run(tx, func(tx *sql.Tx) error { return fn(ctx, tx) })
}

// Close gives the connection back to the pool.
func (w *Writer) Close() error { return w.conn.Close() }
