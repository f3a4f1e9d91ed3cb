package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/transport-http/internal/api"
	"github.com/animus-plugins/animus-plugins/plugins/transport-http/internal/control"
)

// TokenEnv is the declared variable holding the default bearer token.
const TokenEnv = "ANIMUS_HTTP_TOKEN"

// DefaultPort is TransportSchema.default_port; bind_addr defaults to
// 127.0.0.1 on it.
const DefaultPort = 8080

// minTokenLen refuses tokens short enough to guess.
const minTokenLen = 16

// maxSocketPath is sun_path's limit on Linux, less its terminating NUL: a
// longer path can never be dialled, which is better said at start.
const maxSocketPath = 107

// StartParams is TransportConfig (schemas/animus-transport-protocol).
type StartParams struct {
	ControlSocketPath string          `json:"control_socket_path"`
	ProjectRoot       string          `json:"project_root"`
	BindAddr          *string         `json:"bind_addr"`
	Config            json.RawMessage `json:"config"`
}

// Validate checks the fields without touching the socket, which may not
// exist yet.
func (p StartParams) Validate() error {
	switch {
	case p.ControlSocketPath == "":
		return pluginkit.InvalidParams("invalid params: field %q is required", "control_socket_path")
	case !filepath.IsAbs(p.ControlSocketPath):
		return pluginkit.InvalidParams("invalid params: control_socket_path must be an absolute path")
	case len(p.ControlSocketPath) > maxSocketPath:
		return pluginkit.InvalidParams("invalid params: control_socket_path is longer than the %d bytes a Unix socket path may have", maxSocketPath)
	case p.ProjectRoot == "":
		return pluginkit.InvalidParams("invalid params: field %q is required", "project_root")
	case !filepath.IsAbs(p.ProjectRoot):
		return pluginkit.InvalidParams("invalid params: project_root must be an absolute path")
	}
	return nil
}

// httpConfig is TransportConfig.config for this transport. Unknown keys are
// refused: a misspelt security setting must not be silently ignored.
type httpConfig struct {
	AuthTokenEnv      *string                `json:"auth_token_env"`
	AuthToken         json.RawMessage        `json:"auth_token"`
	Tokens            map[string]tokenConfig `json:"tokens"`
	CORS              *corsConfig            `json:"cors"`
	AllowedHosts      []string               `json:"allowed_hosts"`
	MaxBodyBytes      *int64                 `json:"max_body_bytes"`
	MaxHeaderBytes    *int64                 `json:"max_header_bytes"`
	ReadHeaderTimeout *int64                 `json:"read_header_timeout_ms"`
	ReadTimeout       *int64                 `json:"read_timeout_ms"`
	WriteTimeout      *int64                 `json:"write_timeout_ms"`
	IdleTimeout       *int64                 `json:"idle_timeout_ms"`
	ControlTimeout    *int64                 `json:"control_timeout_ms"`
	DrainTimeout      *int64                 `json:"drain_timeout_ms"`
	KeepAlive         *int64                 `json:"keepalive_ms"`
	LogsIdle          *int64                 `json:"logs_idle_ms"`
	ControlPoolSize   *int64                 `json:"control_pool_size"`
	MaxStreams        *int64                 `json:"max_streams"`
}

type corsConfig struct {
	AllowedOrigins []string `json:"allowed_origins"`
}

// tokenConfig is one config.tokens entry: keyed by the name of the
// environment variable that holds the token, it gives the actor the token
// stands for.
type tokenConfig struct {
	UserID   string   `json:"user_id"`
	Claims   []string `json:"claims"`
	TenantID string   `json:"tenant_id"`
}

// settings is a validated start request.
type settings struct {
	listenAddr  string
	loopback    bool
	projectRoot string
	socket      string
	api         api.Options
	poolSize    int

	readHeaderTimeout time.Duration
	readTimeout       time.Duration
	idleTimeout       time.Duration
	maxHeaderBytes    int
	drain             time.Duration

	// secrets are the token values, so the runtime can redact them: the
	// variables config names are not declared, so it cannot know them.
	secrets []string
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// parseSettings validates everything transport/start needs before binding.
// getenv is os.Getenv in production.
func parseSettings(p StartParams, getenv func(string) string) (*settings, error) {
	var cfg httpConfig
	if present(p.Config) {
		dec := json.NewDecoder(bytes.NewReader(p.Config))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			return nil, pluginkit.InvalidParams("invalid params: config: %s", strings.TrimPrefix(err.Error(), "json: "))
		}
	}
	if present(cfg.AuthToken) {
		return nil, pluginkit.InvalidParams("invalid params: config.auth_token is not accepted: put the token in %s (or the variable config.auth_token_env names) so it never sits in a config file", TokenEnv)
	}
	st := &settings{socket: p.ControlSocketPath, projectRoot: p.ProjectRoot}
	creds, err := credentials(cfg, getenv)
	if err != nil {
		return nil, err
	}
	st.api.Auth = api.NewAuthenticator(creds)
	for _, c := range creds {
		st.secrets = append(st.secrets, c.Token)
	}
	if err := st.bind(p.BindAddr, st.api.Auth != nil); err != nil {
		return nil, err
	}
	if cfg.CORS != nil {
		for _, o := range cfg.CORS.AllowedOrigins {
			if err := checkOrigin(o); err != nil {
				return nil, err
			}
		}
		st.api.AllowedOrigins = cfg.CORS.AllowedOrigins
	}
	for _, h := range cfg.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/ ") {
			return nil, pluginkit.InvalidParams("invalid params: config.allowed_hosts entry %q must be a host name (optionally host:port)", h)
		}
	}
	st.api.AllowedHosts = cfg.AllowedHosts
	st.api.HostGuard = st.loopback || len(cfg.AllowedHosts) > 0
	return st, st.limits(cfg)
}

func present(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && string(t) != "null"
}

// credentials gathers the accepted bearer tokens. Every named variable
// must be set: a configured but missing token fails the start rather than
// silently serving without it.
func credentials(cfg httpConfig, getenv func(string) string) ([]api.Credential, error) {
	var creds []api.Credential
	seen := map[string]string{}
	add := func(name, token string, actor *api.Actor) error {
		if len(token) < minTokenLen {
			return pluginkit.InvalidParams("invalid params: the token in %s is too short (at least %d characters)", name, minTokenLen)
		}
		if other, dup := seen[token]; dup {
			return pluginkit.InvalidParams("invalid params: %s and %s hold the same token", other, name)
		}
		seen[token] = name
		creds = append(creds, api.Credential{Token: token, Actor: actor})
		return nil
	}
	name := TokenEnv
	if cfg.AuthTokenEnv != nil {
		name = *cfg.AuthTokenEnv
		if !envName.MatchString(name) {
			return nil, pluginkit.InvalidParams("invalid params: config.auth_token_env %q is not an environment variable name", name)
		}
		if getenv(name) == "" {
			return nil, pluginkit.InvalidParams("invalid params: config.auth_token_env names %s, which is not set", name)
		}
	}
	if tok := getenv(name); tok != "" {
		if err := add(name, tok, nil); err != nil {
			return nil, err
		}
	}
	for _, n := range slices.Sorted(maps.Keys(cfg.Tokens)) {
		t := cfg.Tokens[n]
		if !envName.MatchString(n) {
			return nil, pluginkit.InvalidParams("invalid params: config.tokens key %q must name an environment variable holding the token", n)
		}
		if t.UserID == "" {
			return nil, pluginkit.InvalidParams("invalid params: config.tokens.%s.user_id is required", n)
		}
		tok := getenv(n)
		if tok == "" {
			return nil, pluginkit.InvalidParams("invalid params: config.tokens names %s, which is not set", n)
		}
		if err := add(n, tok, &api.Actor{UserID: t.UserID, Claims: t.Claims, TenantID: t.TenantID}); err != nil {
			return nil, err
		}
	}
	return creds, nil
}

// bind parses bind_addr. Without a token only loopback is allowed: an
// unauthenticated daemon API must never face a network.
func (st *settings) bind(addr *string, authed bool) error {
	a := net.JoinHostPort("127.0.0.1", strconv.Itoa(DefaultPort))
	if addr != nil {
		a = *addr
	}
	host, portText, err := net.SplitHostPort(a)
	if err != nil {
		return pluginkit.InvalidParams("invalid params: bind_addr %q is not host:port", a)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return pluginkit.InvalidParams("invalid params: bind_addr %q has no valid port (0-65535)", a)
	}
	listenHost := host
	switch ip := net.ParseIP(host); {
	case strings.EqualFold(host, "localhost"):
		// Bind the address, not the name: /etc/hosts cannot widen it.
		listenHost, st.loopback = "127.0.0.1", true
	case ip != nil:
		st.loopback = ip.IsLoopback()
	}
	if !st.loopback && !authed {
		return pluginkit.InvalidParams("invalid params: refusing to bind %q without a bearer token: only loopback addresses are served unauthenticated; set %s (or config.auth_token_env) or bind 127.0.0.1", a, TokenEnv)
	}
	st.listenAddr = net.JoinHostPort(listenHost, strconv.Itoa(port))
	return nil
}

// checkOrigin accepts exactly what a browser sends in Origin:
// scheme://host[:port], no path, no wildcard.
func checkOrigin(o string) error {
	bad := func(why string) error {
		return pluginkit.InvalidParams("invalid params: config.cors.allowed_origins entry %q %s", o, why)
	}
	if o == "*" || o == "null" {
		return bad("is not allowed: list exact origins")
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return bad("must be an http(s) origin such as http://localhost:5173")
	}
	if u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return bad("must have no path, query or user info")
	}
	if o != strings.ToLower(o) {
		return bad("must be lower case, as browsers send it")
	}
	return nil
}

// limits fills sizes and timeouts, each checked against a sane range.
func (st *settings) limits(cfg httpConfig) error {
	var err error
	num := func(name string, v *int64, def, lo, hi int64) int64 {
		if v == nil || err != nil {
			return def
		}
		if *v < lo || *v > hi {
			err = pluginkit.InvalidParams("invalid params: config.%s must be between %d and %d", name, lo, hi)
			return def
		}
		return *v
	}
	ms := func(name string, v *int64, def, lo, hi int64) time.Duration {
		return time.Duration(num(name, v, def, lo, hi)) * time.Millisecond
	}
	const hour = 3_600_000
	st.api.MaxBodyBytes = num("max_body_bytes", cfg.MaxBodyBytes, api.DefaultMaxBodyBytes, 1, 64<<20)
	st.maxHeaderBytes = int(num("max_header_bytes", cfg.MaxHeaderBytes, 64<<10, 4<<10, 1<<20))
	st.readHeaderTimeout = ms("read_header_timeout_ms", cfg.ReadHeaderTimeout, 5_000, 10, hour)
	st.readTimeout = ms("read_timeout_ms", cfg.ReadTimeout, 30_000, 10, hour)
	st.api.WriteTimeout = ms("write_timeout_ms", cfg.WriteTimeout, 60_000, 10, hour)
	st.idleTimeout = ms("idle_timeout_ms", cfg.IdleTimeout, 120_000, 10, hour)
	st.api.ControlTimeout = ms("control_timeout_ms", cfg.ControlTimeout, 30_000, 10, hour)
	st.drain = ms("drain_timeout_ms", cfg.DrainTimeout, 4_000, 0, 60_000)
	st.api.KeepAlive = ms("keepalive_ms", cfg.KeepAlive, 15_000, 10, hour)
	st.api.LogsIdle = ms("logs_idle_ms", cfg.LogsIdle, 300, 10, 60_000)
	st.poolSize = int(num("control_pool_size", cfg.ControlPoolSize, control.DefaultPoolSize, 1, 256))
	st.api.MaxStreams = int(num("max_streams", cfg.MaxStreams, api.DefaultMaxStreams, 1, 10_000))
	return err
}

// describe is for logs: what was configured, never a token.
func (st *settings) describe() string {
	return fmt.Sprintf("loopback=%t auth=%t origins=%d allowed_hosts=%d", st.loopback, st.api.Auth != nil,
		len(st.api.AllowedOrigins), len(st.api.AllowedHosts))
}
