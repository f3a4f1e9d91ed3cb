package config

import (
	"errors"
	"fmt"
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

// TestSecretValues: every form a value can take in an error text is
// listed, longest first (so pluginkit replaces a secret before any secret
// inside it), and ordinary URL words are not.
func TestSecretValues(t *testing.T) {
	cases := []struct {
		name, value string
		want        []string
	}{
		{"plain", "s3cret-value", []string{"s3cret-value"}},
		{"rotation keeps both keys", " old-key new-key\n", []string{" old-key new-key\n", "old-key new-key", "old-key", "new-key"}},
		{"token in the query", "https://receiver.test/hook?token=tok-123",
			[]string{"https://receiver.test/hook?token=tok-123", "/hook?token=tok-123", "token=tok-123"}},
		{"token in the path", "https://hooks.slack.test/services/T0001/B0002/XXXXsecret42XXXX",
			[]string{"https://hooks.slack.test/services/T0001/B0002/XXXXsecret42XXXX", "/services/T0001/B0002/XXXXsecret42XXXX", "XXXXsecret42XXXX"}},
		{"password", "https://bot:pa55word-123@hooks.test/in",
			[]string{"https://bot:pa55word-123@hooks.test/in", "https://bot:xxxxx@hooks.test/in", "pa55word-123"}},
		{"no digit: ordinary path words", "http://quick.test/q/abcdef", []string{"http://quick.test/q/abcdef"}},
		{"unset", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := SecretValues(envOf(map[string]string{"V": c.value}), "V", "")
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", c.want) {
				t.Fatalf("SecretValues(%q)\n got %q\nwant %q", c.value, got, c.want)
			}
		})
	}
	// Several variables make one list, longest first.
	env := envOf(map[string]string{"A": "short-one", "B": "a-much-longer-secret-value", "C": "short-one"})
	if got := fmt.Sprint(SecretValues(env, "A", "B", "C")); got != "[a-much-longer-secret-value short-one]" {
		t.Fatalf("several variables: %s", got)
	}
}
