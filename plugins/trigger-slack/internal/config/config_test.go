package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadDefaults(t *testing.T) {
	c := Load(env(nil))
	if c.Mode != ModeSocket || c.APIBase != DefaultAPIBase || c.EventsAddr != DefaultEventsAddr ||
		c.EventsPath != DefaultEventsPath || !c.IgnoreBots || len(c.Channels) != 0 {
		t.Fatalf("defaults: %+v", c)
	}
	if c.SlackAPIURL() != "https://slack.com/api/" {
		t.Fatalf("SlackAPIURL = %q", c.SlackAPIURL())
	}
	if err := c.Problem(); err != nil {
		t.Fatalf("Problem() = %v", err)
	}
}

func TestLoadValues(t *testing.T) {
	c := Load(env(map[string]string{
		EnvAPIBase:        "http://127.0.0.1:9/api///",
		EnvFilterChannels: " C1, ,D2 ,",
		EnvMode:           "HTTP",
		EnvEventsAddr:     "0.0.0.0:8080",
		EnvEventsPath:     "/hooks/slack",
		EnvIgnoreBots:     "off",
		EnvAppToken:       "  xapp-1 ",
	}))
	if c.APIBase != "http://127.0.0.1:9/api" || c.Mode != ModeHTTP || c.EventsAddr != "0.0.0.0:8080" ||
		c.EventsPath != "/hooks/slack" || c.IgnoreBots || c.AppToken != "xapp-1" {
		t.Fatalf("values: %+v", c)
	}
	if len(c.Channels) != 2 || !c.Channels["C1"] || !c.Channels["D2"] {
		t.Fatalf("channels: %v", c.Channels)
	}
}

func TestProblems(t *testing.T) {
	cases := []struct {
		name, key, value, want string
	}{
		{"mode", EnvMode, "carrier-pigeon", `SLACK_MODE must be socket or http, got "carrier-pigeon"`},
		{"addr", EnvEventsAddr, "3000", `SLACK_EVENTS_ADDR must be host:port`},
		{"path", EnvEventsPath, "slack/events", `SLACK_EVENTS_PATH must start with /`},
		{"bots", EnvIgnoreBots, "perhaps", `SLACK_IGNORE_BOTS must be true or false`},
		{"base", EnvAPIBase, "ftp://x", `SLACK_API_BASE must be an http(s) URL`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Load(env(map[string]string{tc.key: tc.value, EnvAppToken: "a", EnvBotToken: "b"}))
			err := c.WatchCheck()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("WatchCheck() = %v, want %q", err, tc.want)
			}
			if errors.Is(err, ErrUnset) {
				t.Fatalf("a bad value must not read as missing configuration: %v", err)
			}
		})
	}
}

func TestWatchCheck(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want string // "" = ok
	}{
		{"socket nothing", nil, "SLACK_APP_TOKEN unset"},
		{"socket no bot", map[string]string{EnvAppToken: "a"}, "SLACK_BOT_TOKEN unset"},
		{"socket ok", map[string]string{EnvAppToken: "a", EnvBotToken: "b"}, ""},
		{"empty is unset", map[string]string{EnvAppToken: "  ", EnvBotToken: "b"}, "SLACK_APP_TOKEN unset"},
		{"http no secret", map[string]string{EnvMode: "http", EnvAppToken: "a", EnvBotToken: "b"}, "SLACK_SIGNING_SECRET unset"},
		{"http no app token needed", map[string]string{EnvMode: "http", EnvSigningSecret: "s", EnvBotToken: "b"}, ""},
		{"http no bot", map[string]string{EnvMode: "http", EnvSigningSecret: "s"}, "SLACK_BOT_TOKEN unset"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Load(env(tc.env)).WatchCheck()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("WatchCheck() = %v", err)
				}
				return
			}
			if err == nil || err.Error() != tc.want || !errors.Is(err, ErrUnset) {
				t.Fatalf("WatchCheck() = %v, want %q wrapping ErrUnset", err, tc.want)
			}
		})
	}
}

func TestTriggerIDs(t *testing.T) {
	cases := []struct {
		name        string
		env         map[string]string
		fromWatch   string
		mention, dm string
		wantErr     bool
	}{
		{"base", map[string]string{EnvTriggerID: "t"}, "", "t", "t", false},
		{"overrides", map[string]string{EnvTriggerID: "t", EnvTriggerIDDM: "d"}, "", "t", "d", false},
		{"both overrides, no base", map[string]string{EnvTriggerIDMention: "m", EnvTriggerIDDM: "d"}, "", "m", "d", false},
		{"watch config wins", map[string]string{EnvTriggerID: "t", EnvTriggerIDDM: "d"}, "w", "w", "w", false},
		{"watch config alone", nil, "w", "w", "w", false},
		{"nothing", nil, "", "", "", true},
		{"one kind unresolved", map[string]string{EnvTriggerIDMention: "m"}, "", "", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, d, err := Load(env(tc.env)).TriggerIDs(tc.fromWatch)
			if tc.wantErr {
				if err == nil || !strings.HasPrefix(err.Error(), "SLACK_TRIGGER_ID unset") || !errors.Is(err, ErrUnset) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil || m != tc.mention || d != tc.dm {
				t.Fatalf("got %q %q %v, want %q %q", m, d, err, tc.mention, tc.dm)
			}
		})
	}
}

func TestDedupPath(t *testing.T) {
	root := "/srv/project"
	cases := []struct{ stateDir, want string }{
		{"", filepath.Join(root, ".animus", "trigger-slack", "dedup.db")},
		{"/var/lib/slack", "/var/lib/slack/dedup.db"},
		{"state", filepath.Join(root, "state", "dedup.db")},
	}
	for _, tc := range cases {
		got := Load(env(map[string]string{EnvStateDir: tc.stateDir})).DedupPath(root)
		if got != tc.want {
			t.Errorf("StateDir %q: DedupPath = %q, want %q", tc.stateDir, got, tc.want)
		}
	}
}

func TestEnvDeclaresEverythingRead(t *testing.T) {
	read := map[string]bool{}
	Load(func(k string) string { read[k] = true; return "" })
	declared := map[string]bool{}
	for _, e := range Env {
		declared[e.Name] = true
		if e.Description == "" {
			t.Errorf("%s has no description", e.Name)
		}
	}
	for k := range read {
		if !declared[k] {
			t.Errorf("%s is read but not declared in env_required (the daemon would scrub it)", k)
		}
	}
	for _, secret := range []string{EnvAppToken, EnvBotToken, EnvSigningSecret} {
		for _, e := range Env {
			if e.Name == secret && !e.Sensitive {
				t.Errorf("%s must be sensitive", secret)
			}
		}
	}
}
