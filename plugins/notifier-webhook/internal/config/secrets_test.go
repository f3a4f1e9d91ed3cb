package config

import (
	"errors"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	env := map[string]string{
		"URL": "https://receiver.test/hook?token=tok-123", "SLACK": "https://hooks.slack.test/T/B/xyz",
		"AUTH": "Basic abc", "SECRET": "s3cret", "TOKEN": "bearer-tok", "NL": "a\nb", "BLANK": "  ",
	}
	cases := []struct {
		name string
		conn Connector
		want string // Misconfigured message substring; "" = ok
	}{
		{"webhook ok", Connector{Type: TypeWebhook, ID: "w", URLEnv: "URL", HeadersEnv: map[string]string{"Authorization": "AUTH"}, SigningSecretEnv: "SECRET", BearerTokenEnv: "TOKEN"}, ""},
		{"slack ok", Connector{Type: TypeSlack, ID: "s", WebhookURLEnv: "SLACK"}, ""},
		{"no url_env", Connector{Type: TypeWebhook, ID: "w"}, "has no url_env"},
		{"slack without webhook_url_env", Connector{Type: TypeSlack, ID: "s", URLEnv: "URL"}, "has no webhook_url_env"},
		{"unset url", Connector{Type: TypeWebhook, ID: "w", URLEnv: "MISSING"}, "MISSING is unset or empty"},
		{"not a url", Connector{Type: TypeWebhook, ID: "w", URLEnv: "AUTH"}, "not an absolute http(s) URL"},
		{"missing header var", Connector{Type: TypeWebhook, ID: "w", URLEnv: "URL", HeadersEnv: map[string]string{"X-A": "MISSING"}}, "(header X-A) is unset"},
		{"header line break", Connector{Type: TypeWebhook, ID: "w", URLEnv: "URL", HeadersEnv: map[string]string{"X-A": "NL"}}, "holds a line break"},
		{"bad header name", Connector{Type: TypeWebhook, ID: "w", URLEnv: "URL", HeadersEnv: map[string]string{"Bad Name": "AUTH"}}, "header name"},
		{"blank secret", Connector{Type: TypeWebhook, ID: "w", URLEnv: "URL", SigningSecretEnv: "BLANK"}, "(signing secret) is unset"},
		{"missing token", Connector{Type: TypeWebhook, ID: "w", URLEnv: "URL", BearerTokenEnv: "MISSING"}, "(bearer token) is unset"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tgt, err := Resolve(&c.conn, envOf(env))
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if tgt.URL == nil || tgt.URL.Scheme != "https" {
					t.Fatalf("target %+v", tgt)
				}
				return
			}
			var mis *Misconfigured
			if !errors.As(err, &mis) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want Misconfigured containing %q", err, c.want)
			}
			for _, v := range env {
				if len(strings.TrimSpace(v)) > 3 && strings.Contains(err.Error(), v) {
					t.Errorf("error %q contains the value %q", err, v)
				}
			}
		})
	}
}

func TestRedactor(t *testing.T) {
	env := map[string]string{
		"URL": "https://receiver.test/hook?token=tok-123", "SECRET": "old-key new-key", EnvWebhookURL: "http://quick.test/q/abcdef",
		"SLACK": "https://hooks.slack.test/services/T0001/B0002/XXXXsecret42XXXX",
		"SHORT": "abc",
	}
	cfg := &Config{Connectors: []Connector{{ID: "w", URLEnv: "URL", SigningSecretEnv: "SECRET", HeadersEnv: map[string]string{"X": "SHORT"}},
		{ID: "s", Type: TypeSlack, WebhookURLEnv: "SLACK"}}}
	r := NewRedactor(envOf(env), cfg.SecretEnvNames()...)
	cases := []struct{ in, want string }{
		{`Post "https://receiver.test/hook?token=tok-123": refused`, `Post "<redacted>": refused`},
		{"body echoed old-key and new-key", "body echoed <redacted> and <redacted>"},
		{"quick http://quick.test/q/abcdef failed", "quick <redacted> failed"},
		{"slack said: no_service for XXXXsecret42XXXX under /services", "slack said: no_service for <redacted> under /services"},
		{"abc is too short to count as a secret", "abc is too short to count as a secret"},
		{"line one\nline two\r\n  three", "line one line two three"},
		{"no route for /hook?token=tok-123 (hook)", "no route for <redacted> (hook)"},
		{"echo: /q/abcdef", "echo: /q/abcdef"}, // no digit: an ordinary path word, not a token
	}
	for _, c := range cases {
		if got := r.Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := r.Redact(strings.Repeat("x", 1000)); len(got) != MaxErrorLen || !strings.HasSuffix(got, "...") {
		t.Errorf("long text not bounded: %d bytes", len(got))
	}
}
