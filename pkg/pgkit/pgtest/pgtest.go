package pgtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit/scratch"
)

// Environment variables scripts/postgres.sh run exports.
const (
	EnvDSN    = "ANIMUS_PG_TEST_DSN"
	EnvScript = "ANIMUS_PG_TEST_SCRIPT"
)

const missing = "PostgreSQL required under CI: run via scripts/postgres.sh run -- …"

// DSN returns $ANIMUS_PG_TEST_DSN. Without it the test skips, or fails
// under CI=true, where a silently skipped database test would hide a
// broken setup.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(EnvDSN)
	if dsn != "" {
		return dsn
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(missing)
	}
	t.Skip("no " + EnvDSN + ": PostgreSQL tests need a cluster; run via scripts/postgres.sh run -- …")
	return ""
}

// Connect opens one plain connection for test set-up and checks, closed
// at cleanup.
func Connect(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// Schema creates a fresh schema t_<16 hex digits> and drops it (CASCADE)
// at cleanup, so tests sharing one cluster, even in parallel, never see
// each other's tables.
func Schema(t testing.TB, dsn string) string {
	t.Helper()
	name, drop, err := scratch.NewSchema(context.Background(), dsn, "t")
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return name
}

// EnvExternal set to 1 says the test server is not ours to start or
// stop (docker-compose.e2e.yml's postgres service).
const EnvExternal = "ANIMUS_PG_TEST_EXTERNAL"

// Cluster is a private PostgreSQL cluster, for a test that restarts or
// kills the server: doing that to the shared cluster would fail every
// other package's tests running at the same time.
type Cluster struct {
	DSN    string
	script string
	env    []string
}

// Own starts a private cluster with scripts/postgres.sh (its own state
// directory, the next free port) and stops it at cleanup. Where the test
// server is external (EnvExternal) the test skips, saying so; without
// the script it skips, or fails under CI=true, as DSN does.
func Own(t testing.TB) *Cluster {
	t.Helper()
	if os.Getenv(EnvExternal) == "1" {
		t.Skip("the PostgreSQL server is external (" + EnvExternal + "=1): this test starts and restarts a cluster of its own, which the native run (scripts/postgres.sh) does")
	}
	script := os.Getenv(EnvScript)
	if script == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(missing)
		}
		t.Skip("no " + EnvScript + ": a private cluster needs scripts/postgres.sh; run via scripts/postgres.sh run -- …")
	}
	c := &Cluster{script: script, env: append(os.Environ(), "ANIMUS_PG_STATE="+t.TempDir(), "ANIMUS_PG_PORT=")}
	out, err := c.run("start")
	if err != nil {
		t.Fatalf("pgtest: %s start: %v\n%s", script, err, out)
	}
	t.Cleanup(func() {
		if out, err := c.run("stop"); err != nil {
			t.Errorf("pgtest: %s stop: %v\n%s", script, err, out)
		}
	})
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, EnvDSN+"="); ok {
			c.DSN = strings.TrimSpace(v)
		}
	}
	if c.DSN == "" {
		t.Fatalf("pgtest: %s start printed no %s line:\n%s", script, EnvDSN, out)
	}
	t.Logf("pgtest: private cluster %s", c.DSN)
	return c
}

// Restart restarts the cluster (pg_ctl restart -m fast: every session is
// terminated with 57P01) and returns once it accepts connections again.
func (c *Cluster) Restart(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if out, err := c.run("restart"); err != nil {
		t.Fatalf("pgtest: %s restart: %v\n%s", c.script, err, out)
	}
	if err := WaitReady(ctx, c.DSN); err != nil {
		t.Fatalf("pgtest: server not back after restart: %v", err)
	}
}

// run runs the script with the cluster's state directory; stdout only
// (the DSN line), stderr is its log.
func (c *Cluster) run(verb string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.script, verb)
	cmd.Env = c.env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return append(out, stderr.String()...), err
	}
	return out, nil
}

// WaitReady polls until a connection to dsn answers a query, or ctx ends.
func WaitReady(ctx context.Context, dsn string) error {
	for {
		err := func() error {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			c, err := pgx.Connect(cctx, dsn)
			if err != nil {
				return err
			}
			defer c.Close(context.Background())
			return c.Ping(cctx)
		}()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %w)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TerminateApp calls pg_terminate_backend on every other session whose
// application_name is app, waiting (up to 5 s each) until they have
// exited, and returns how many it ended.
func TerminateApp(ctx context.Context, dsn, app string) (int, error) {
	return terminate(ctx, dsn, "application_name = $1", app)
}

// TerminateQuery is TerminateApp for sessions whose current (or last)
// query matches the LIKE pattern, e.g. "%FROM jobs%".
func TerminateQuery(ctx context.Context, dsn, like string) (int, error) {
	return terminate(ctx, dsn, "query LIKE $1", like)
}

func terminate(ctx context.Context, dsn, cond, arg string) (int, error) {
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer c.Close(context.Background())
	// cond is one of the two fixed strings above, never caller text.
	var n int
	err = c.QueryRow(ctx, `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000))
		FROM pg_stat_activity
		WHERE pid <> pg_backend_pid() AND backend_type = 'client backend' AND `+cond, arg).Scan(&n)
	return n, err
}

// keyed maps a test-chosen key (a bound project root) to its schema.
var keyed = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}

// SchemaFor is Schema once per key: every caller with the same key (every
// service bound to one project root: peers, reopened services) shares
// one schema, and each key has its own; it is dropped when t ends.
func SchemaFor(t testing.TB, dsn, key string) string {
	t.Helper()
	keyed.Lock()
	defer keyed.Unlock()
	if s, ok := keyed.m[key]; ok {
		return s
	}
	s := Schema(t, dsn)
	keyed.m[key] = s
	t.Cleanup(func() {
		keyed.Lock()
		delete(keyed.m, key)
		keyed.Unlock()
	})
	return s
}
