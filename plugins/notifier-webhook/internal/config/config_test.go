package config

import (
	"strings"
	"testing"
)

func TestParseValidates(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		want string // substring of the error; "" = valid
	}{
		{"reference example", `{"schema":"animus.daemon-notification-config.v1","version":1,
			"connectors":[{"type":"webhook","id":"ops","url_env":"OPS_URL","headers_env":{"Authorization":"OPS_AUTH"},"timeout_secs":10,"enabled":true},
			{"type":"slack_webhook","id":"team","webhook_url_env":"SLACK_URL","channel":"#animus","username":"animus","icon_emoji":":robot:"}],
			"subscriptions":[{"id":"all-to-ops","connector_id":"ops","event_types":["*"],"project_root":null,"workflow_id":null,"task_id":null,"enabled":true}],
			"retry_policy":{"max_attempts":5,"base_delay_secs":2,"max_delay_secs":300},"max_deliveries_per_tick":8}`, ""},
		{"wrong schema", `{"schema":"animus.other.v1"}`, "schema must be"},
		{"wrong version", `{"version":2}`, "version must be 1"},
		{"duplicate connector", `{"connectors":[{"type":"webhook","id":"a"},{"type":"webhook","id":"a"}]}`, `id "a" is used twice`},
		{"duplicate subscription", `{"connectors":[{"type":"webhook","id":"a"}],"subscriptions":[{"id":"s","connector_id":"a"},{"id":"s","connector_id":"a"}]}`, `id "s" is used twice`},
		{"unknown connector", `{"connectors":[{"type":"webhook","id":"a"}],"subscriptions":[{"id":"s","connector_id":"b"}]}`, `connector_id "b" names no connector`},
		{"unknown type", `{"connectors":[{"type":"email","id":"a"}]}`, `type "email" is not supported`},
		{"missing type", `{"connectors":[{"id":"a"}]}`, "type is required"},
		{"missing id", `{"connectors":[{"type":"webhook"}]}`, "id is required"},
		{"bad signature style", `{"connectors":[{"type":"webhook","id":"a","signature":"md5"}]}`, "signature \"md5\""},
		{"bad signature header", `{"connectors":[{"type":"webhook","id":"a","signature":"stripe","signature_header":"Bad Header"}]}`, "signature_header"},
		{"wrong field type", `{"connectors":"nope"}`, `field "connectors" has the wrong type`},
		{"not json", `{`, "unexpected end"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.doc), "pm-config.json")
			if c.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "pm-config.json: notification_config: ") {
				t.Errorf("error %q does not say where", err)
			}
		})
	}
}

func TestParseClampsAndDefaults(t *testing.T) {
	cases := []struct {
		name                            string
		doc                             string
		attempts, base, maxDelay, ticks int
	}{
		{"absent: defaults", `{}`, 5, 2, 300, 8},
		{"low values clamp up", `{"retry_policy":{"max_attempts":0,"base_delay_secs":0,"max_delay_secs":0},"max_deliveries_per_tick":0}`, 1, 1, 1, 1},
		{"high values clamp down", `{"retry_policy":{"max_attempts":99,"base_delay_secs":99999,"max_delay_secs":999999},"max_deliveries_per_tick":1000}`, 20, 3600, 86400, 128},
		{"max below base rises to base", `{"retry_policy":{"base_delay_secs":30,"max_delay_secs":10}}`, 5, 30, 30, 8},
		{"negative", `{"retry_policy":{"max_attempts":-3},"max_deliveries_per_tick":-1}`, 1, 2, 300, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte(c.doc), "x")
			if err != nil {
				t.Fatal(err)
			}
			rp := cfg.RetryPolicy
			if rp.MaxAttempts != c.attempts || rp.BaseDelaySecs != c.base || rp.MaxDelaySecs != c.maxDelay || cfg.MaxDeliveriesPerTick != c.ticks {
				t.Fatalf("got %+v ticks %d, want %d/%d/%d ticks %d", rp, cfg.MaxDeliveriesPerTick, c.attempts, c.base, c.maxDelay, c.ticks)
			}
		})
	}
}

func TestConnectorDefaults(t *testing.T) {
	cfg, err := Parse([]byte(`{"connectors":[{"type":"webhook","id":"a","timeout_secs":900,"max_concurrency":-4},{"type":"slack_webhook","id":"b","enabled":false}],
		"subscriptions":[{"id":"s","connector_id":"a","event_types":[]}]}`), "x")
	if err != nil {
		t.Fatal(err)
	}
	a, b := cfg.Connector("a"), cfg.Connector("b")
	if a.TimeoutSecs != 60 || a.MaxConcurrency != 1 || a.Signature != SignatureStandard || !a.IsEnabled() {
		t.Errorf("connector a = %+v", a)
	}
	if b.TimeoutSecs != DefaultTimeoutSecs || b.MaxConcurrency != DefaultMaxConcurrency || b.IsEnabled() {
		t.Errorf("connector b = %+v", b)
	}
	if got := cfg.Subscriptions[0].EventTypes; len(got) != 1 || got[0] != "*" {
		t.Errorf("empty event_types became %v, want [*]", got)
	}
	if cfg.Connector("nope") != nil {
		t.Error("unknown connector found")
	}
}
