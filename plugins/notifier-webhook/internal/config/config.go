package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Fixed values of the configuration document.
const (
	Schema  = "animus.daemon-notification-config.v1"
	Version = 1

	TypeWebhook = "webhook"
	TypeSlack   = "slack_webhook"

	SignatureStandard = "standard"
	SignatureGitHub   = "github"
	SignatureStripe   = "stripe"
)

// Defaults for absent fields (the reference's documented example values).
const (
	DefaultMaxAttempts    = 5
	DefaultBaseDelaySecs  = 2
	DefaultMaxDelaySecs   = 300
	DefaultMaxPerTick     = 8
	DefaultTimeoutSecs    = 10
	DefaultMaxConcurrency = 4
)

// Config is a validated notification_config.
type Config struct {
	Connectors           []Connector
	Subscriptions        []Subscription
	RetryPolicy          RetryPolicy
	MaxDeliveriesPerTick int
	// Source says where the configuration came from, for messages
	// ("ANIMUS_NOTIFIER_CONFIG", "pm-config.json", "ANIMUS_WEBHOOK_URL").
	Source string
}

// Connector is one delivery target. Every *Env field names an environment
// variable; the plugin never stores the value.
type Connector struct {
	Type             string            `json:"type"`
	ID               string            `json:"id"`
	Enabled          *bool             `json:"enabled"`
	URLEnv           string            `json:"url_env"`
	WebhookURLEnv    string            `json:"webhook_url_env"`
	HeadersEnv       map[string]string `json:"headers_env"`
	TimeoutSecs      int               `json:"timeout_secs"`
	Channel          string            `json:"channel"`
	Username         string            `json:"username"`
	IconEmoji        string            `json:"icon_emoji"`
	SigningSecretEnv string            `json:"signing_secret_env"`
	Signature        string            `json:"signature"`
	SignatureHeader  string            `json:"signature_header"`
	BearerTokenEnv   string            `json:"bearer_token_env"`
	MaxConcurrency   int               `json:"max_concurrency"`
}

// IsEnabled reports the enabled flag (absent means enabled).
func (c *Connector) IsEnabled() bool { return c.Enabled == nil || *c.Enabled }

// URLEnvName is the variable holding the target URL for the connector's type.
func (c *Connector) URLEnvName() string {
	if c.Type == TypeSlack {
		return c.WebhookURLEnv
	}
	return c.URLEnv
}

// Subscription routes matching events to a connector. Nil filters match
// anything.
type Subscription struct {
	ID          string   `json:"id"`
	ConnectorID string   `json:"connector_id"`
	EventTypes  []string `json:"event_types"`
	ProjectRoot *string  `json:"project_root"`
	WorkflowID  *string  `json:"workflow_id"`
	TaskID      *string  `json:"task_id"`
	Enabled     *bool    `json:"enabled"`
}

// IsEnabled reports the enabled flag (absent means enabled).
func (s *Subscription) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// RetryPolicy bounds redelivery.
type RetryPolicy struct {
	MaxAttempts   int `json:"max_attempts"`
	BaseDelaySecs int `json:"base_delay_secs"`
	MaxDelaySecs  int `json:"max_delay_secs"`
}

// Connector returns the connector with id, or nil.
func (c *Config) Connector(id string) *Connector {
	for i := range c.Connectors {
		if c.Connectors[i].ID == id {
			return &c.Connectors[i]
		}
	}
	return nil
}

// document is the JSON shape; pointers tell "absent" from an explicit value
// so that absent fields take defaults and explicit ones are clamped.
type document struct {
	Schema        *string        `json:"schema"`
	Version       *int           `json:"version"`
	Connectors    []Connector    `json:"connectors"`
	Subscriptions []Subscription `json:"subscriptions"`
	RetryPolicy   *struct {
		MaxAttempts   *int `json:"max_attempts"`
		BaseDelaySecs *int `json:"base_delay_secs"`
		MaxDelaySecs  *int `json:"max_delay_secs"`
	} `json:"retry_policy"`
	MaxDeliveriesPerTick *int `json:"max_deliveries_per_tick"`
}

// Parse decodes and validates one notification_config object. Unknown
// fields are ignored, as the reference does.
func Parse(raw []byte, source string) (*Config, error) {
	var doc document
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: notification_config: %s", source, describeJSONError(err))
	}
	cfg, err := doc.validate()
	if err != nil {
		return nil, fmt.Errorf("%s: notification_config: %w", source, err)
	}
	cfg.Source = source
	return cfg, nil
}

func (d *document) validate() (*Config, error) {
	if d.Schema != nil && *d.Schema != Schema {
		return nil, fmt.Errorf("schema must be %q", Schema)
	}
	if d.Version != nil && *d.Version != Version {
		return nil, fmt.Errorf("version must be %d", Version)
	}
	cfg := &Config{Connectors: d.Connectors, Subscriptions: d.Subscriptions}
	ids := map[string]bool{}
	for i := range cfg.Connectors {
		c := &cfg.Connectors[i]
		if err := c.normalize(); err != nil {
			return nil, fmt.Errorf("connectors[%d]: %w", i, err)
		}
		if ids[c.ID] {
			return nil, fmt.Errorf("connectors[%d]: id %q is used twice", i, c.ID)
		}
		ids[c.ID] = true
	}
	subIDs := map[string]bool{}
	for i := range cfg.Subscriptions {
		s := &cfg.Subscriptions[i]
		switch {
		case s.ID == "":
			return nil, fmt.Errorf("subscriptions[%d]: id is required", i)
		case subIDs[s.ID]:
			return nil, fmt.Errorf("subscriptions[%d]: id %q is used twice", i, s.ID)
		case !ids[s.ConnectorID]:
			return nil, fmt.Errorf("subscriptions[%d] (%s): connector_id %q names no connector", i, s.ID, s.ConnectorID)
		}
		subIDs[s.ID] = true
		if len(s.EventTypes) == 0 {
			s.EventTypes = []string{"*"}
		}
	}
	rp := RetryPolicy{MaxAttempts: DefaultMaxAttempts, BaseDelaySecs: DefaultBaseDelaySecs, MaxDelaySecs: DefaultMaxDelaySecs}
	if r := d.RetryPolicy; r != nil {
		rp.MaxAttempts = valueOr(r.MaxAttempts, rp.MaxAttempts)
		rp.BaseDelaySecs = valueOr(r.BaseDelaySecs, rp.BaseDelaySecs)
		rp.MaxDelaySecs = valueOr(r.MaxDelaySecs, rp.MaxDelaySecs)
	}
	// The reference's clamps.
	rp.MaxAttempts = clamp(rp.MaxAttempts, 1, 20)
	rp.BaseDelaySecs = clamp(rp.BaseDelaySecs, 1, 3600)
	rp.MaxDelaySecs = clamp(rp.MaxDelaySecs, rp.BaseDelaySecs, 86400)
	cfg.RetryPolicy = rp
	cfg.MaxDeliveriesPerTick = clamp(valueOr(d.MaxDeliveriesPerTick, DefaultMaxPerTick), 1, 128)
	return cfg, nil
}

func (c *Connector) normalize() error {
	if c.ID == "" {
		return errors.New("id is required")
	}
	switch c.Type {
	case TypeWebhook, TypeSlack:
	case "":
		return fmt.Errorf("connector %q: type is required (%q or %q)", c.ID, TypeWebhook, TypeSlack)
	default:
		return fmt.Errorf("connector %q: type %q is not supported (%q or %q)", c.ID, c.Type, TypeWebhook, TypeSlack)
	}
	switch c.Signature {
	case "":
		c.Signature = SignatureStandard
	case SignatureStandard, SignatureGitHub, SignatureStripe:
	default:
		return fmt.Errorf("connector %q: signature %q is not one of standard, github, stripe", c.ID, c.Signature)
	}
	if c.SignatureHeader != "" && !validHeaderName(c.SignatureHeader) {
		return fmt.Errorf("connector %q: signature_header %q is not a valid header name", c.ID, c.SignatureHeader)
	}
	if c.TimeoutSecs == 0 {
		c.TimeoutSecs = DefaultTimeoutSecs
	}
	c.TimeoutSecs = clamp(c.TimeoutSecs, 1, 60)
	if c.MaxConcurrency == 0 {
		c.MaxConcurrency = DefaultMaxConcurrency
	}
	c.MaxConcurrency = clamp(c.MaxConcurrency, 1, 32)
	return nil
}

// validHeaderName accepts RFC 7230 token characters.
func validHeaderName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return s != ""
}

func valueOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

func clamp(v, lo, hi int) int {
	return max(lo, min(v, hi))
}

func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("field %q has the wrong type (got %s)", te.Field, te.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}
