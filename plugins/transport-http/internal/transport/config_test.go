package transport

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func startParams(bind string, cfg string) StartParams {
	p := StartParams{ControlSocketPath: "/run/animus/control.sock", ProjectRoot: "/src/project"}
	if bind != "" {
		p.BindAddr = &bind
	}
	if cfg != "" {
		p.Config = json.RawMessage(cfg)
	}
	return p
}

const tok = "0123456789abcdef-token"

func TestParseSettings(t *testing.T) {
	cases := []struct {
		name     string
		bind     string
		cfg      string
		env      map[string]string
		wantErr  string // substring of the -32602 message; "" = success
		listen   string
		loopback bool
		guard    bool
		auth     bool
	}{
		{name: "defaults", listen: "127.0.0.1:8080", loopback: true, guard: true},
		{name: "localhost binds the address", bind: "localhost:0", listen: "127.0.0.1:0", loopback: true, guard: true},
		{name: "ipv6 loopback", bind: "[::1]:9000", listen: "[::1]:9000", loopback: true, guard: true},
		{name: "all interfaces need a token", bind: ":8080", wantErr: "without a bearer token"},
		{name: "public ip needs a token", bind: "10.0.0.5:8080", wantErr: "without a bearer token"},
		{name: "hostname needs a token", bind: "myhost:8080", wantErr: "without a bearer token"},
		{name: "token allows all interfaces", bind: "0.0.0.0:8080", env: map[string]string{TokenEnv: tok}, listen: "0.0.0.0:8080", auth: true},
		{name: "allowed_hosts guards any bind", bind: "0.0.0.0:1", env: map[string]string{TokenEnv: tok},
			cfg: `{"allowed_hosts":["gw.example"]}`, listen: "0.0.0.0:1", auth: true, guard: true},
		{name: "auth_token_env", cfg: `{"auth_token_env":"MY_TOKEN"}`, env: map[string]string{"MY_TOKEN": tok},
			listen: "127.0.0.1:8080", loopback: true, guard: true, auth: true},
		{name: "auth_token_env unset", cfg: `{"auth_token_env":"MY_TOKEN"}`, wantErr: "MY_TOKEN, which is not set"},
		{name: "auth_token_env not a name", cfg: `{"auth_token_env":"MY-TOKEN"}`, wantErr: "not an environment variable name"},
		{name: "literal token refused", cfg: `{"auth_token":"s3cr3t"}`, wantErr: "config.auth_token is not accepted"},
		{name: "short token", env: map[string]string{TokenEnv: "short-tok"}, wantErr: "too short"},
		{name: "tokens map", cfg: `{"tokens":{"A_TOK":{"user_id":"a"},"B_TOK":{"user_id":"b","claims":["x"]}}}`,
			env: map[string]string{"A_TOK": tok + "a", "B_TOK": tok + "b"}, listen: "127.0.0.1:8080", loopback: true, guard: true, auth: true},
		{name: "tokens entry unset", cfg: `{"tokens":{"A_TOK":{"user_id":"a"}}}`, wantErr: "A_TOK, which is not set"},
		{name: "duplicate tokens", cfg: `{"tokens":{"A_TOK":{"user_id":"a"}}}`, env: map[string]string{"A_TOK": tok, TokenEnv: tok}, wantErr: "same token"},
		{name: "unknown key", cfg: `{"cors":{"allowed_origin":["http://a"]}}`, wantErr: "allowed_origin"},
		{name: "wildcard origin", cfg: `{"cors":{"allowed_origins":["*"]}}`, wantErr: "exact origins"},
		{name: "upper-case origin", cfg: `{"cors":{"allowed_origins":["http://Localhost:1"]}}`, wantErr: "lower case"},
		{name: "origin with path", cfg: `{"cors":{"allowed_origins":["http://a.test/"]}}`, wantErr: "no path"},
		{name: "origin without scheme", cfg: `{"cors":{"allowed_origins":["a.test"]}}`, wantErr: "http(s) origin"},
		{name: "bad allowed host", cfg: `{"allowed_hosts":["http://x/"]}`, wantErr: "host name"},
		{name: "body limit range", cfg: `{"max_body_bytes":100000000}`, wantErr: "max_body_bytes"},
		{name: "pool size range", cfg: `{"control_pool_size":0}`, wantErr: "control_pool_size"},
		{name: "bad bind", bind: "8080", wantErr: "not host:port"},
		{name: "bad port", bind: "127.0.0.1:65536", wantErr: "valid port"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, err := parseSettings(startParams(c.bind, c.cfg), env(c.env))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want one mentioning %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.listenAddr != c.listen || st.loopback != c.loopback || st.api.HostGuard != c.guard || (st.api.Auth != nil) != c.auth {
				t.Fatalf("listen %s loopback %v guard %v auth %v", st.listenAddr, st.loopback, st.api.HostGuard, st.api.Auth != nil)
			}
			if d := st.describe(); strings.Contains(d, tok) {
				t.Fatalf("describe leaks the token: %s", d)
			}
		})
	}
}

func TestLimitsDefaultsAndOverrides(t *testing.T) {
	st, err := parseSettings(startParams("", ""), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if st.api.MaxBodyBytes != 1<<20 || st.api.KeepAlive != 15*time.Second || st.drain != 4*time.Second ||
		st.api.ControlTimeout != 30*time.Second || st.poolSize != 8 || st.maxHeaderBytes != 64<<10 {
		t.Fatalf("defaults: %+v", st)
	}
	st, err = parseSettings(startParams("", `{"max_body_bytes":2048,"keepalive_ms":250,"drain_timeout_ms":0,"control_pool_size":2}`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if st.api.MaxBodyBytes != 2048 || st.api.KeepAlive != 250*time.Millisecond || st.drain != 0 || st.poolSize != 2 {
		t.Fatalf("overrides: %+v", st)
	}
}

func TestValidateStartParams(t *testing.T) {
	for _, c := range []struct {
		p    StartParams
		want string
	}{
		{StartParams{}, "control_socket_path"},
		{StartParams{ControlSocketPath: "rel.sock", ProjectRoot: "/p"}, "absolute"},
		{StartParams{ControlSocketPath: "/" + strings.Repeat("x", 110), ProjectRoot: "/p"}, "longer"},
		{StartParams{ControlSocketPath: "/s.sock"}, "project_root"},
		{StartParams{ControlSocketPath: "/s.sock", ProjectRoot: "p"}, "absolute"},
	} {
		if err := c.p.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%+v) = %v, want %q", c.p, err, c.want)
		}
	}
	if err := (StartParams{ControlSocketPath: "/s.sock", ProjectRoot: "/p"}).Validate(); err != nil {
		t.Error(err)
	}
}
