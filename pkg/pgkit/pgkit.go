package pgkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Options describe how to reach the database. Only DSN and Schema are
// required.
type Options struct {
	DSN string // libpq URL (postgres://…) or key=value string
	// Schema is the plugin's namespace: a plain identifier
	// [a-z_][a-z0-9_]{0,62}, not starting with pg_. It becomes search_path
	// on every connection, so store SQL names its tables unqualified;
	// Migrate creates it if missing.
	Schema         string
	ConnectTimeout time.Duration // dialing and startup of one connection; default 5 s
	OpTimeout      time.Duration // upper bound of one transaction attempt; default 15 s
	MaxConns       int32         // pool size; default 4
	AppName        string        // application_name, shown in pg_stat_activity
}

// Defaults for the zero fields of Options.
const (
	DefaultConnectTimeout = 5 * time.Second
	DefaultOpTimeout      = 15 * time.Second
	DefaultMaxConns       = 4
)

// ErrClosed is returned by Pool (and so Tx, Migrate, Ping) after Close.
var ErrClosed = errors.New("pgkit: database closed")

var schemaRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// ValidSchema reports why name cannot be a pgkit schema, or nil. Only
// plain lower-case identifiers are accepted, so the name is the same
// quoted or not, fits in NAMEDATALEN, and can never carry SQL.
func ValidSchema(name string) error {
	if !schemaRE.MatchString(name) {
		return fmt.Errorf("pgkit: schema %q is not a plain identifier [a-z_][a-z0-9_]{0,62}", name)
	}
	if strings.HasPrefix(name, "pg_") {
		return fmt.Errorf("pgkit: schema %q: the pg_ prefix is reserved by PostgreSQL", name)
	}
	return nil
}

// DB is a lazily connected pool bound to one schema. It is safe for
// concurrent use.
type DB struct {
	cfg       *pgxpool.Config
	schema    string
	connectTO time.Duration
	opTO      time.Duration

	// dialing is a one-slot semaphore held while the first connection is
	// made, so concurrent first callers share one dial, yet each still
	// gives up when its own ctx ends (a sync.Mutex could not).
	dialing chan struct{}
	mu      sync.Mutex // guards pool and closed
	pool    *pgxpool.Pool
	closed  bool
}

// Open parses and validates o. It never dials: the first Pool (or Tx,
// Migrate, Ping) does, so a plugin starts and answers even while its
// database is down.
func Open(o Options) (*DB, error) {
	if err := ValidSchema(o.Schema); err != nil {
		return nil, err
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.OpTimeout <= 0 {
		o.OpTimeout = DefaultOpTimeout
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if strings.TrimSpace(o.DSN) == "" {
		return nil, errors.New("pgkit: empty DSN")
	}
	cfg, err := pgxpool.ParseConfig(o.DSN)
	if err != nil {
		// Not wrapped: pgconn's ParseConfigError keeps the raw DSN in a
		// field, and its text masks the password only on a best-effort
		// basis, so the password is blanked here once more.
		msg := err.Error()
		if pw := Password(o.DSN); pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
		return nil, errors.New("pgkit: parse DSN: " + msg)
	}
	cfg.MaxConns = o.MaxConns
	cfg.MinConns = 0 // a background dial at pool creation would defeat lazy opening
	cfg.HealthCheckPeriod = 30 * time.Second
	cfg.MaxConnIdleTime = 5 * time.Minute
	cc := cfg.ConnConfig
	cc.ConnectTimeout = o.ConnectTimeout
	// Keepalive probes find a server that vanished without a FIN (a host
	// down, a partitioned network) on idle pooled connections; OpTimeout
	// bounds the busy ones.
	dialer := &net.Dialer{
		Timeout: o.ConnectTimeout,
		KeepAliveConfig: net.KeepAliveConfig{
			Enable:   true,
			Idle:     15 * time.Second,
			Interval: 5 * time.Second,
			Count:    3,
		},
	}
	cc.DialFunc = dialer.DialContext
	// A startup parameter, not a SET after connecting: it costs no round
	// trip and survives DISCARD ALL. The name is validated, so unquoted is
	// the same as quoted.
	cc.RuntimeParams["search_path"] = o.Schema
	if o.AppName != "" {
		cc.RuntimeParams["application_name"] = o.AppName
	}
	return &DB{
		cfg:       cfg,
		schema:    o.Schema,
		connectTO: o.ConnectTimeout,
		opTO:      o.OpTimeout,
		dialing:   make(chan struct{}, 1),
	}, nil
}

// Schema returns the schema name given to Open.
func (db *DB) Schema() string { return db.schema }

// Pool returns the connection pool, creating it and making its first
// connection on the first call (bounded by ConnectTimeout and ctx). A
// failed dial is not remembered: the next call dials again, so a plugin
// recovers by itself once the database is back.
func (db *DB) Pool(ctx context.Context) (*pgxpool.Pool, error) {
	if p, err := db.current(); p != nil || err != nil {
		return p, err
	}
	select {
	case db.dialing <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-db.dialing }()
	if p, err := db.current(); p != nil || err != nil {
		return p, err // another caller dialed while we waited
	}
	p, err := pgxpool.NewWithConfig(ctx, db.cfg)
	if err != nil {
		return nil, fmt.Errorf("pgkit: create pool: %w", err)
	}
	dctx, cancel := context.WithTimeout(ctx, db.connectTO)
	defer cancel()
	if err := p.Ping(dctx); err != nil {
		p.Close()
		if dctx.Err() != nil && ctx.Err() == nil {
			// Our connect timeout, not the caller's deadline: a server
			// that accepts and never answers is unavailable, not slow.
			return nil, fmt.Errorf("%w: no connection within the connect timeout (%s): %w", ErrTimeout, db.connectTO, err)
		}
		return nil, err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		p.Close()
		return nil, ErrClosed
	}
	db.pool = p
	return p, nil
}

func (db *DB) current() (*pgxpool.Pool, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil, ErrClosed
	}
	return db.pool, nil
}

// Ping checks that the database answers, dialing if needed, within
// OpTimeout.
func (db *DB) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, db.opTO)
	defer cancel()
	p, err := db.Pool(ctx)
	if err != nil {
		return err
	}
	return p.Ping(ctx)
}

// Close closes the pool (waiting for acquired connections to be
// released). Later calls fail with ErrClosed.
func (db *DB) Close() {
	db.mu.Lock()
	p := db.pool
	db.pool, db.closed = nil, true
	db.mu.Unlock()
	if p != nil {
		p.Close()
	}
}
