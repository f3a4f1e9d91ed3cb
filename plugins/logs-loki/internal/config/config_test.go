package config

import (
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadDefaultsAndMissingURL(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.URL != nil || c.Missing != "LOKI_URL unset" {
		t.Fatalf("URL=%v Missing=%q", c.URL, c.Missing)
	}
	if c.ServiceName != "animus" || c.StructuredMetadata != SMAuto || c.MaxQueryWindow != 720*time.Hour ||
		c.DefaultLookback != 24*time.Hour || c.TailMode != "ws" || c.PushEncoding != "protobuf" || c.RetentionHint != 0 {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestLoadValues(t *testing.T) {
	c, err := Load(env(map[string]string{
		EnvURL: "https://logs.example.com/", EnvTenantID: "t1", EnvUsername: "123", EnvPassword: "tok",
		EnvServiceName: "svc", EnvExtraLabels: "host=a, env=prod", EnvStructuredMeta: "off",
		EnvDefaultLookback: "1h", EnvMaxQueryWindow: "7d", EnvRetentionHint: "30d", EnvTailMode: "poll",
		EnvTailPollInterval: "250ms", EnvTimeout: "2s", EnvInsecure: "true", EnvPushEncoding: "json",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.URL.String() != "https://logs.example.com" || c.TenantID != "t1" || c.Username != "123" || c.Password != "tok" {
		t.Fatalf("%+v", c)
	}
	if len(c.ExtraLabels) != 2 || c.ExtraLabels[0] != (Label{"env", "prod"}) || c.ExtraLabels[1] != (Label{"host", "a"}) {
		t.Fatalf("labels %+v", c.ExtraLabels)
	}
	if c.MaxQueryWindow != 7*24*time.Hour || c.RetentionHint != 30*24*time.Hour || c.TailPollInterval != 250*time.Millisecond ||
		c.StructuredMetadata != SMOff || c.TailMode != "poll" || !c.InsecureSkipVerify || c.PushEncoding != "json" {
		t.Fatalf("%+v", c)
	}
}

func TestLoadRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"bad url", map[string]string{EnvURL: "loki:3100"}, EnvURL},
		{"user without password", map[string]string{EnvUsername: "u"}, EnvPassword},
		{"password without user", map[string]string{EnvPassword: "p"}, EnvUsername},
		{"basic and bearer", map[string]string{EnvUsername: "u", EnvPassword: "p", EnvBearerToken: "b"}, EnvBearerToken},
		{"reserved label", map[string]string{EnvExtraLabels: "level=x"}, "set by the plugin"},
		{"bad label name", map[string]string{EnvExtraLabels: "1a=x"}, "must match"},
		{"dup label", map[string]string{EnvExtraLabels: "a=x,a=y"}, "twice"},
		{"empty value", map[string]string{EnvExtraLabels: "a="}, "value"},
		{"not pair", map[string]string{EnvExtraLabels: "a"}, "name=value"},
		{"too many", map[string]string{EnvExtraLabels: "a=1,b=1,c=1,d=1,e=1,f=1,g=1,h=1,i=1,j=1,k=1,l=1,m=1"}, "at most 12"},
		{"sm mode", map[string]string{EnvStructuredMeta: "maybe"}, EnvStructuredMeta},
		{"tail mode", map[string]string{EnvTailMode: "sse"}, EnvTailMode},
		{"duration", map[string]string{EnvTimeout: "soon"}, EnvTimeout},
		{"tiny timeout", map[string]string{EnvTimeout: "1ms"}, EnvTimeout},
		{"encoding", map[string]string{EnvPushEncoding: "xml"}, EnvPushEncoding},
		{"ca file", map[string]string{EnvCAFile: "/nonexistent/ca.pem"}, EnvCAFile},
		{"insecure", map[string]string{EnvInsecure: "perhaps"}, EnvInsecure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(env(tc.env))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want mention of %q", err, tc.want)
			}
		})
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"30d": 720 * time.Hour, "2w": 336 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("%s → %v, %v", in, got, err)
		}
	}
	if _, err := ParseDuration("xd"); err == nil {
		t.Error("xd parsed")
	}
}
