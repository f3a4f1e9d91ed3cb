package pgkit

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Conn dials one connection outside the pool, with the pool's settings
// (search_path, application_name, keep-alive, ConnectTimeout): for a
// session that must stay put, such as LISTEN, which a pooled connection
// handed to other callers cannot hold. The caller closes it.
func (db *DB) Conn(ctx context.Context) (*pgx.Conn, error) {
	if _, err := db.current(); err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, db.connectTO)
	defer cancel()
	c, err := pgx.ConnectConfig(dctx, db.cfg.ConnConfig.Copy())
	if err != nil && dctx.Err() != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("%w: no connection within the connect timeout (%s): %w", ErrTimeout, db.connectTO, err)
	}
	return c, err
}
