package schemacheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustDefault(t *testing.T) *Set {
	t.Helper()
	s, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLoadsEveryCrate(t *testing.T) {
	s := mustDefault(t)
	for _, crate := range []string{PluginProtocol, SubjectProtocol, TriggerProtocol, LogStorageProtocol,
		TransportProtocol, QueueProtocol, DurableProtocol, NotifierProtocol} {
		n := 0
		for _, typ := range s.Types() {
			if strings.HasPrefix(typ, crate+"/") {
				n++
			}
		}
		if n == 0 {
			t.Errorf("no schemas loaded for %s", crate)
		}
	}
	if s.Has(PluginProtocol, "_all") {
		t.Error("_all.json bundle loaded as a type")
	}
}

func TestValidate(t *testing.T) {
	s := mustDefault(t)
	const initOK = `{"protocol_version":"1.1.0","plugin_info":{"name":"p","version":"0.1.0","plugin_kind":"queue"},"capabilities":{"methods":["health/check"],"streaming":false,"progress":false,"cancellation":false}}`
	cases := []struct {
		name  string
		check func() error
		ok    bool
		want  string // substring of the error
	}{
		{"InitializeResult valid", func() error { return s.Validate(PluginProtocol, "InitializeResult", []byte(initOK)) }, true, ""},
		{"InitializeResult lacks plugin_info", func() error {
			return s.Validate(PluginProtocol, "InitializeResult", []byte(`{"protocol_version":"1.1.0","capabilities":{}}`))
		}, false, "plugin_info"},
		{"nested $defs ref enforced", func() error {
			return s.Validate(PluginProtocol, "InitializeResult", []byte(`{"protocol_version":"1.1.0","plugin_info":{"name":"p"},"capabilities":{}}`))
		}, false, "plugin_kind"},
		{"not JSON", func() error { return s.Validate(PluginProtocol, "HealthCheckResult", []byte(`{status`)) }, false, "not JSON"},
		{"unknown type is an error", func() error { return s.Validate(PluginProtocol, "NoSuchType", []byte(`{}`)) }, false, "no schema"},
		{"result: health ok", func() error { return s.ValidateResult("health/check", []byte(`{"status":"degraded","uptime_ms":5}`)) }, true, ""},
		{"result: health bad status", func() error { return s.ValidateResult("health/check", []byte(`{"status":"fine"}`)) }, false, "result of health/check"},
		{"result: negative uptime", func() error {
			return s.ValidateResult("health/check", []byte(`{"status":"healthy","uptime_ms":-1}`))
		}, false, "uptime_ms"},
		{"result: initialize", func() error { return s.ValidateResult("initialize", []byte(initOK)) }, true, ""},
		{"result: unknown method passes", func() error { return s.ValidateResult("vendor/x", []byte(`42`)) }, true, ""},
		{"manifest ok", func() error {
			return s.ValidateManifest([]byte(`{"name":"n","version":"1","plugin_kind":"queue","description":"d","protocol_version":"1.1.0","env_required":[{"name":"X","sensitive":false}]}`))
		}, true, ""},
		{"manifest lacks description", func() error {
			return s.ValidateManifest([]byte(`{"name":"n","version":"1","plugin_kind":"queue","protocol_version":"1.1.0"}`))
		}, false, "description"},
		{"manifest env entry lacks name", func() error {
			return s.ValidateManifest([]byte(`{"name":"n","version":"1","plugin_kind":"queue","description":"d","protocol_version":"1.1.0","env_required":[{}]}`))
		}, false, "name"},
		{"frame: response ok", func() error { return s.ValidateFrame([]byte(`{"jsonrpc":"2.0","id":1,"result":null}`)) }, true, ""},
		{"frame: error ok", func() error {
			return s.ValidateFrame([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"m","data":{"category":"not_found"}}}`))
		}, true, ""},
		{"frame: error code not integer", func() error {
			return s.ValidateFrame([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`))
		}, false, "RpcResponse"},
		{"frame: response without jsonrpc", func() error { return s.ValidateFrame([]byte(`{"id":1,"result":{}}`)) }, false, "jsonrpc"},
		{"frame: notification ok", func() error { return s.ValidateFrame([]byte(`{"jsonrpc":"2.0","method":"log/entry","params":{}}`)) }, true, ""},
		{"frame: notification method not a string", func() error {
			return s.ValidateFrame([]byte(`{"jsonrpc":"2.0","method":7}`))
		}, false, "RpcNotification"},
		{"frame: not an object", func() error { return s.ValidateFrame([]byte(`[1]`)) }, false, "not a JSON object"},
		{"notification: unknown method passes", func() error { return s.ValidateNotification("log/entry", []byte(`{}`)) }, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.check()
			if c.ok != (err == nil) {
				t.Fatalf("err = %v, want ok=%v", err, c.ok)
			}
			if err != nil && !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to mention %q", err, c.want)
			}
		})
	}
}

func TestRegister(t *testing.T) {
	dir, err := FindSharedDir()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir) // a private Set: registrations must not leak into Default()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterResult("queue/stats", QueueProtocol, "NoSuch"); err == nil {
		t.Error("registering a missing schema succeeded")
	}
	if err := s.RegisterNotification("trigger/event", PluginProtocol, "TriggerEvent"); err != nil {
		t.Fatal(err)
	}
	if err := s.ValidateNotification("trigger/event", []byte(`{"payload":{}}`)); err == nil || !strings.Contains(err.Error(), "event_id") {
		t.Errorf("trigger/event without event_id: %v", err)
	}
	if err := s.ValidateNotification("trigger/event", nil); err == nil {
		t.Error("missing params passed")
	}
	if err := s.ValidateNotification("trigger/event", []byte(`{"event_id":"e1"}`)); err != nil {
		t.Error(err)
	}
}

func TestLocating(t *testing.T) {
	// Missing schemas are an error, never a silent skip.
	if _, err := Load(t.TempDir()); err == nil {
		t.Error("Load of a dir without schemas/ succeeded")
	}
	empty := t.TempDir()
	os.Mkdir(filepath.Join(empty, "schemas"), 0o755)
	if _, err := Load(empty); err == nil {
		t.Error("Load of an empty schemas/ succeeded")
	}
	t.Setenv(EnvSharedDir, empty+"/nope")
	if _, err := FindSharedDir(); err == nil {
		t.Error("bad " + EnvSharedDir + " accepted")
	}
	real := mustDefault(t).Dir()
	t.Setenv(EnvSharedDir, real)
	if d, err := FindSharedDir(); err != nil || d != real {
		t.Errorf("FindSharedDir = %q, %v", d, err)
	}
	// Walk-up: from a directory with no shared/ above it, locating fails.
	t.Setenv(EnvSharedDir, "")
	t.Chdir(t.TempDir())
	if _, err := FindSharedDir(); err == nil {
		t.Skip("a shared/schemas exists above the temp dir; walk-up failure not testable here")
	}
}

func Example() {
	s, err := Default()
	if err != nil {
		panic(err)
	}
	fmt.Println(s.ValidateResult("health/check", []byte(`{"status":"healthy"}`)))
	fmt.Println(s.ValidateResult("health/check", []byte(`{"status":"fine"}`)) != nil)
	// Output:
	// <nil>
	// true
}
