package durable

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/pluginkittest"
)

// serve runs svc in process with pluginkittest (the handlers, the wire
// encoding and the real SQLite store, without building the binary: the e2e
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
	return New(Options{Rules: rules, Open: func(ctx context.Context, root string) (storage.Store, error) {
		return sqlitestore.Open(ctx, filepath.Join(root, ".animus", "durable.sqlite"), sqlitestore.Options{})
	}})
}

// env builds a getenv from pairs.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}
