package config

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// Target is a connector with its environment resolved: what one delivery
// needs. It holds secret values and must never be logged.
type Target struct {
	URL           *url.URL
	Headers       http.Header
	SigningSecret string // "" = unsigned
	BearerToken   string
}

// Misconfigured is a connector that cannot send at all (a missing
// variable, an invalid URL or header). Retrying cannot help, so the
// delivery is dead-lettered at once. The message names variables, never
// their values.
type Misconfigured struct{ Msg string }

func (e *Misconfigured) Error() string { return "misconfigured: " + e.Msg }

func misconfigured(format string, args ...any) error {
	return &Misconfigured{Msg: fmt.Sprintf(format, args...)}
}

// Resolve reads the connector's variables through getenv.
func Resolve(c *Connector, getenv func(string) string) (*Target, error) {
	name := c.URLEnvName()
	if name == "" {
		field := "url_env"
		if c.Type == TypeSlack {
			field = "webhook_url_env"
		}
		return nil, misconfigured("connector %q has no %s", c.ID, field)
	}
	raw := strings.TrimSpace(getenv(name))
	if raw == "" {
		return nil, misconfigured("connector %q: environment variable %s is unset or empty", c.ID, name)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, misconfigured("connector %q: %s is not an absolute http(s) URL", c.ID, name)
	}
	t := &Target{URL: u, Headers: http.Header{}}
	names := make([]string, 0, len(c.HeadersEnv))
	for h := range c.HeadersEnv {
		names = append(names, h)
	}
	sort.Strings(names)
	for _, h := range names {
		env := c.HeadersEnv[h]
		v := getenv(env)
		switch {
		case !validHeaderName(h):
			return nil, misconfigured("connector %q: header name %q is invalid", c.ID, h)
		case v == "":
			return nil, misconfigured("connector %q: environment variable %s (header %s) is unset or empty", c.ID, env, h)
		case strings.ContainsAny(v, "\r\n\x00"):
			return nil, misconfigured("connector %q: environment variable %s (header %s) holds a line break", c.ID, env, h)
		}
		t.Headers.Set(h, v)
	}
	if env := c.SigningSecretEnv; env != "" {
		if t.SigningSecret = getenv(env); strings.TrimSpace(t.SigningSecret) == "" {
			return nil, misconfigured("connector %q: environment variable %s (signing secret) is unset or empty", c.ID, env)
		}
	}
	if env := c.BearerTokenEnv; env != "" {
		t.BearerToken = strings.TrimSpace(getenv(env))
		switch {
		case t.BearerToken == "":
			return nil, misconfigured("connector %q: environment variable %s (bearer token) is unset or empty", c.ID, env)
		case strings.ContainsAny(t.BearerToken, "\r\n\x00"):
			return nil, misconfigured("connector %q: environment variable %s (bearer token) holds a line break", c.ID, env)
		}
	}
	return t, nil
}

// SecretEnvNames lists every variable the configuration names: all of
// them may hold secrets (a Slack webhook URL is a credential).
func (c *Config) SecretEnvNames() []string {
	var out []string
	for i := range c.Connectors {
		cn := &c.Connectors[i]
		out = append(out, cn.URLEnv, cn.WebhookURLEnv, cn.SigningSecretEnv, cn.BearerTokenEnv)
		for _, env := range cn.HeadersEnv {
			out = append(out, env)
		}
	}
	return out
}

// SecretValues lists every form in which the values of the variables
// names may appear in an error text, longest first, for the notifier to
// register with the host connection (pluginkit.Peer.AddSecret), which then
// scrubs them from logs, error messages and last_error. The value itself,
// trimmed, and each whitespace-separated part (a rotation keeps old and new
// secrets side by side); for a URL, also its re-encoded and redacted forms
// and the parts of it that look like tokens. Values too short to be
// secrets are left to pluginkit, which ignores them.
func SecretValues(getenv func(string) string, names ...string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(v string) {
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	for _, n := range names {
		if n == "" {
			continue
		}
		v := getenv(n)
		add(v)
		add(strings.TrimSpace(v))
		for _, f := range strings.Fields(v) {
			add(f)
		}
		if u, err := url.Parse(strings.TrimSpace(v)); err == nil && u.Host != "" {
			// Go's errors may print a URL re-escaped or without its query,
			// and a receiver may echo the path it was called on: the path
			// of a Slack or Zapier hook is the credential.
			add(u.String())
			add(u.Redacted())
			for _, part := range urlParts(u) {
				if secretLooking(part) {
					add(part)
				}
			}
		}
	}
	// Longest first, for a stable, readable list. pluginkit keeps its own
	// registry longest first whatever the order of AddSecret calls, so a
	// secret that contains another is replaced whole either way.
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// urlParts are the pieces of a URL that may carry a token: the path and
// query, each path segment, each query value, the password.
func urlParts(u *url.URL) []string {
	out := []string{u.RequestURI(), u.EscapedPath(), u.Path, u.RawQuery}
	out = append(out, strings.Split(u.Path, "/")...)
	for _, vs := range u.Query() {
		out = append(out, vs...)
	}
	if p, ok := u.User.Password(); ok {
		out = append(out, p)
	}
	return out
}

// secretLooking tells a token from an ordinary path word ("services",
// "hooks"): ten characters or more with a digit in them. Redacting a
// harmless word costs an error message a little clarity; missing a token
// would leak it.
func secretLooking(s string) bool {
	return len(s) >= 10 && strings.ContainsAny(s, "0123456789")
}
