package pluginkit

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestManifest(t *testing.T) {
	p := testPlugin()
	var out bytes.Buffer
	code, done := p.handleArgs([]string{"--manifest"}, &out, &bytes.Buffer{})
	if !done || code != 0 {
		t.Fatalf("--manifest: code %d done %v", code, done)
	}
	if bytes.Count(out.Bytes(), []byte("\n")) != 1 || !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
		t.Fatalf("manifest is not exactly one line: %q", out.String())
	}
	// Field order follows the reference plugins.
	if !strings.HasPrefix(out.String(), `{"name":"animus-test","version":"1.2.3","plugin_kind":"trigger_backend","description":"pluginkit test plugin","protocol_version":"1.1.0","capabilities":[`) {
		t.Fatalf("manifest prefix: %s", out.String())
	}
	var m struct {
		Capabilities []string `json:"capabilities"`
		EnvRequired  []struct {
			Name      string `json:"name"`
			Sensitive *bool  `json:"sensitive"`
			Required  *bool  `json:"required"`
		} `json:"env_required"`
	}
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	// The manifest's capabilities are the same list initialize advertises.
	h := startHost(t, p)
	var initCaps []string
	for _, v := range result(t, h.initialize())["capabilities"].(map[string]any)["methods"].([]any) {
		initCaps = append(initCaps, v.(string))
	}
	if strings.Join(initCaps, ",") != strings.Join(m.Capabilities, ",") {
		t.Errorf("manifest capabilities %v differ from initialize's %v", m.Capabilities, initCaps)
	}
	names := map[string]bool{}
	for _, e := range m.EnvRequired {
		names[e.Name] = true
		if e.Sensitive == nil || e.Required == nil {
			t.Errorf("env %s: sensitive and required must always be present", e.Name)
		}
	}
	if !names["TEST_PLUGIN_TOKEN"] || !names[LogLevelEnv] {
		t.Errorf("env_required = %v", m.EnvRequired)
	}
}

func TestManifestNeedsNothing(t *testing.T) {
	p := testPlugin()
	p.Preflight = func(context.Context) error { t.Fatal("Preflight ran for --manifest"); return nil }
	p.Init = func(context.Context, *Peer, InitializeParams) error { t.Fatal("Init ran for --manifest"); return nil }
	var out bytes.Buffer
	if code, _ := p.handleArgs([]string{"-m"}, &out, &bytes.Buffer{}); code != 0 || out.Len() == 0 {
		t.Fatalf("-m: code %d, %q", code, out.String())
	}
}

func TestArgs(t *testing.T) {
	ran := ""
	p := testPlugin()
	p.Commands = map[string]Command{"inspect": {Summary: "show state", Run: func(ctx context.Context, args []string) int {
		ran = strings.Join(args, " ")
		return 3
	}}}
	tests := []struct {
		args         []string
		code         int
		done         bool
		stdout, errs string
	}{
		{nil, 0, false, "", ""},
		{[]string{"--version"}, 0, true, "animus-test 1.2.3 (protocol 1.1.0)", ""},
		{[]string{"--help"}, 0, true, "", "inspect"},
		{[]string{"-h"}, 0, true, "", LogLevelEnv},
		{[]string{"--bogus"}, 2, true, "", `unknown argument "--bogus"`},
		{[]string{"inspect", "--project", "/x"}, 3, true, "", ""},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errs bytes.Buffer
			code, done := p.handleArgs(tc.args, &out, &errs)
			if code != tc.code || done != tc.done {
				t.Fatalf("code %d done %v, want %d %v", code, done, tc.code, tc.done)
			}
			if !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errs.String(), tc.errs) {
				t.Errorf("stdout %q stderr %q", out.String(), errs.String())
			}
		})
	}
	if ran != "--project /x" {
		t.Errorf("command got args %q", ran)
	}
}

func TestLoggerRedactsSecrets(t *testing.T) {
	t.Setenv("TEST_PLUGIN_TOKEN", "sk-live-abcdef")
	t.Setenv(LogLevelEnv, "debug")
	var buf bytes.Buffer
	log := newLogger(&buf, newRedactor(testPlugin().Env, nil))
	log.Debug("calling with sk-live-abcdef", "header", "Bearer sk-live-abcdef", "err", errFor("sk-live-abcdef"))
	if strings.Contains(buf.String(), "sk-live-abcdef") || strings.Count(buf.String(), "[REDACTED]") != 3 {
		t.Fatalf("log line leaks or misses redactions: %s", buf.String())
	}
	t.Setenv(LogLevelEnv, "")
	buf.Reset()
	newLogger(&buf, newRedactor(nil, nil)).Info("quiet by default")
	if buf.Len() != 0 {
		t.Fatalf("info logged at the default level: %s", buf.String())
	}
}

type errFor string

func (e errFor) Error() string { return "auth failed for " + string(e) }

func TestToWire(t *testing.T) {
	scrub := newRedactor(nil, nil).scrub
	tests := []struct {
		name     string
		err      error
		code     int
		category Category
		message  string
		internal bool
	}{
		{"not found", NotFound("TASK-1"), -32602, CategoryNotFound, "not found: TASK-1", false},
		{"unavailable", Unavailable("db locked"), -32603, CategoryUnavailable, "backend unavailable: db locked", false},
		{"quota", QuotaExceeded("429"), -32603, CategoryQuotaExceeded, "quota exceeded: 429", false},
		{"kind code", Errorf(CategoryConflict, "state conflict").WithCode(-32203), -32203, CategoryConflict, "state conflict", false},
		{"plain error", errFor("x"), -32603, CategoryInternal, "internal error", true},
		{"internal hides cause", Internal(errFor("SELECT * FROM t")), -32603, CategoryInternal, "internal error", true},
		{"deadline", context.DeadlineExceeded, -32003, CategoryTimeout, "request timed out", false},
		{"canceled", context.Canceled, -32002, CategoryCancelled, "request cancelled", false},
		{"not supported", Errorf(CategoryNotSupported, "no tail"), -32001, CategoryNotSupported, "no tail", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			we, internal := toWire(tc.err, scrub)
			if we.Code != tc.code || we.Data["category"] != tc.category || we.Message != tc.message || internal != tc.internal {
				t.Errorf("got %+v internal=%v", we, internal)
			}
		})
	}
	we, _ := toWire(Errorf(CategoryConflict, "x").WithData("actual_state", "assigned"), scrub)
	if we.Data["actual_state"] != "assigned" || we.Data["category"] != CategoryConflict {
		t.Errorf("extra data lost: %+v", we.Data)
	}
}

func TestAddSecretRedactsLogsAndWire(t *testing.T) {
	var logs bytes.Buffer
	p := testPlugin()
	p.redact = newRedactor(p.Env, nil)
	p.Logger = newLogger(&logs, p.redact)
	p.Init = func(ctx context.Context, peer *Peer, params InitializeParams) error {
		peer.AddSecret("runtime-token-123")
		peer.AddSecret("tiny") // too short to redact safely: ignored
		return nil
	}
	h := startHost(t, p)
	h.initialize()
	code, _, _ := errCode(t, h.call("test/internal", map[string]any{"message": "runtime-token-123"}))
	if code != CodeInternalError {
		t.Fatalf("code %d", code)
	}
	last := result(t, h.call("health/check", nil))["last_error"].(string)
	if strings.Contains(last, "runtime-token-123") || !strings.Contains(last, "[REDACTED]") {
		t.Errorf("last_error %q", last)
	}
	if strings.Contains(logs.String(), "runtime-token-123") || !strings.Contains(logs.String(), "[REDACTED]") {
		t.Errorf("log leaks the runtime secret: %s", logs.String())
	}
}

// A secret registered after a shorter one it contains is still replaced
// whole: nothing of it stays visible.
func TestRedactLongestSecretFirst(t *testing.T) {
	r := newRedactor(nil, nil)
	r.add("abcd")
	r.add("xx-abcd-yy-secret")
	r.add("abcd-zz")
	got := r.scrub("a=xx-abcd-yy-secret b=abcd-zz c=abcd")
	if want := "a=" + RedactedMarker + " b=" + RedactedMarker + " c=" + RedactedMarker; got != want {
		t.Fatalf("scrub = %q, want %q", got, want)
	}
}

// Plugin.Secrets are redacted from the start, like sensitive variables:
// the server builds its redactor with them (Main builds the logger's the
// same way).
func TestPluginSecretsRedactWire(t *testing.T) {
	p := testPlugin()
	p.Secrets = []string{"pw-from-the-dsn-42"}
	h := startHost(t, p)
	h.initialize()
	if code, _, _ := errCode(t, h.call("test/internal", map[string]any{"message": "dial failed: pw-from-the-dsn-42"})); code != CodeInternalError {
		t.Fatalf("code %d", code)
	}
	last := result(t, h.call("health/check", nil))["last_error"].(string)
	if strings.Contains(last, "pw-from-the-dsn-42") || !strings.Contains(last, "[REDACTED]") {
		t.Errorf("last_error %q", last)
	}
}

// TestMaxProcs: Main runs a Serial plugin on one P unless the environment
// sets GOMAXPROCS, and leaves every other plugin at Go's default.
func TestMaxProcs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		serial bool
		env    string
		want   int
	}{
		{"serial", true, "", 1},
		{"serial, GOMAXPROCS set", true, "4", 0},
		{"concurrent", false, "", 0},
		{"concurrent, GOMAXPROCS set", false, "2", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Plugin{Serial: tc.serial}
			got := p.maxProcs(func(k string) string {
				if k == "GOMAXPROCS" {
					return tc.env
				}
				return ""
			})
			if got != tc.want {
				t.Fatalf("maxProcs = %d, want %d", got, tc.want)
			}
		})
	}
}
