package queue

import (
	"encoding/json"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/pluginkittest"
)

// serve serves f.s in process by pluginkittest, with the methods and hooks
// main.go gives it, and sends the handshake hs; the error is initialize's
// error reply, if any. So the tests see what a host sees: params decoded by
// pluginkit.Handle through each request type's DecodeParams, errors coded
// and worded by pluginkit, results as encoded on the wire. (The e2e suite
// does the same with the built binary.) The wire log is printed when a test
// fails.
func (f *fixture) serve(hs pluginkittest.Handshake) error {
	f.t.Helper()
	mux := pluginkit.NewMux()
	f.s.Register(mux)
	f.h = pluginkittest.Start(f.t, pluginkit.Plugin{
		Name: "animus-queue-sqlite", Kind: "queue", Mux: mux, KindCapabilities: KindCapabilities(),
		Init: f.s.Init, Health: f.s.Health, Close: f.s.Close,
	})
	var err error
	f.initResult, err = f.h.Handshake(hs)
	return err
}

// bound is the daemon's handshake binding the project as binding (JSON)
// says.
func bound(binding string) pluginkittest.Handshake {
	return pluginkittest.Handshake{InitExtensions: json.RawMessage(`{"project_binding":` + binding + `}`)}
}

// rootBinding is a project binding to root, as the daemon sends it.
func rootBinding(root string) string {
	return `{"project_root":` + mustJSON(root) + `,"repo_scope":"x"}`
}
