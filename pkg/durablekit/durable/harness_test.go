package durable

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/pgstore"
	"github.com/animus-plugins/animus-plugins/pkg/durablekit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/pluginkittest"
)

// serve runs svc in process with pluginkittest (the handlers, the wire
// encoding and the real store (SQLite, or PostgreSQL: testBackend), without building the binary: the e2e
// suite does that) and sends initialize as the agent runner does, with
// init_extensions (nil for none). The wire log is printed when a test
// fails. A string params is sent byte for byte: the wire-shape tests check
// that the plugin keeps values as sent.
func serve(t *testing.T, svc *Service, initExt any) *pluginkittest.Host {
	t.Helper()
	mux := pluginkit.NewMux()
	svc.Register(mux)
	h := pluginkittest.Start(t, pluginkit.Plugin{
		Name: "animus-durable-sqlite", Kind: "durable_store", Mux: mux, Serial: true,
		KindCapabilities: svc.KindCapabilities(), Init: svc.Init, Health: svc.Health, Close: svc.Close,
	})
	if _, err := h.Handshake(pluginkittest.Handshake{HostName: "animus-agent-runner", InitExtensions: initExt}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return h
}

func binding(root string) map[string]any {
	return map[string]any{"project_binding": map[string]string{"project_root": root, "repo_scope": "test-000000"}}
}

// newService is the Service of animus-durable-sqlite with the rules env
// sets and the step log in <root>/.animus/durable.sqlite.
func newService(t *testing.T, getenv func(string) string) *Service {
	t.Helper()
	rules, err := LoadRules(getenv)
	if err != nil {
		t.Fatal(err)
	}
	if testBackend() == "postgres" {
		return New(Options{Rules: rules, Open: pgOpen(t)})
	}
	return New(Options{Rules: rules, Open: func(ctx context.Context, root string) (storage.Store, error) {
		return sqlitestore.Open(ctx, filepath.Join(root, ".animus", "durable.sqlite"), sqlitestore.Options{})
	}})
}

// testBackend is the backend the tests run on: $ANIMUS_DURABLE_TEST_BACKEND,
// sqlite (default) or postgres.
func testBackend() string {
	if os.Getenv("ANIMUS_DURABLE_TEST_BACKEND") == "postgres" {
		return "postgres"
	}
	return "sqlite"
}

// sqliteOnly skips a test (or subtest) that is about SQLite by nature when
// the suite runs on PostgreSQL.
func sqliteOnly(t *testing.T, why string) {
	t.Helper()
	if testBackend() == "postgres" {
		t.Skip("SQLite only (ANIMUS_DURABLE_TEST_BACKEND=postgres): " + why)
	}
}

// pgOpen opens the bound root's namespace (a fresh schema on first use,
// dropped when the test ends) with pgstore, as a PostgreSQL durable plugin
// would.
func pgOpen(t *testing.T) func(ctx context.Context, root string) (storage.Store, error) {
	dsn := pgtest.DSN(t) // on the test goroutine: it may skip
	return func(ctx context.Context, root string) (storage.Store, error) {
		db, err := pgkit.Open(pgkit.Options{DSN: dsn, Schema: pgtest.SchemaFor(t, dsn, root), MaxConns: 2, AppName: "durable-test"})
		if err != nil {
			return nil, err
		}
		t.Cleanup(db.Close) // idempotent: the service's Close closes it first
		return pgstore.Open(ctx, pgstore.Options{DB: db})
	}
}

// env builds a getenv from pairs.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}
