package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// The environment variables, all declared in env_required so the daemon
// forwards them.
const (
	EnvURL              = "LOKI_URL"
	EnvTenantID         = "LOKI_TENANT_ID"
	EnvUsername         = "LOKI_USERNAME"
	EnvPassword         = "LOKI_PASSWORD"
	EnvBearerToken      = "LOKI_BEARER_TOKEN"
	EnvServiceName      = "LOKI_SERVICE_NAME"
	EnvExtraLabels      = "LOKI_EXTRA_LABELS"
	EnvStructuredMeta   = "LOKI_STRUCTURED_METADATA"
	EnvDefaultLookback  = "LOKI_DEFAULT_LOOKBACK"
	EnvMaxQueryWindow   = "LOKI_MAX_QUERY_WINDOW"
	EnvRetentionHint    = "LOKI_RETENTION_HINT"
	EnvTailMode         = "LOKI_TAIL_MODE"
	EnvTailPollInterval = "LOKI_TAIL_POLL_INTERVAL"
	EnvTimeout          = "LOKI_TIMEOUT"
	EnvCAFile           = "LOKI_CA_FILE"
	EnvInsecure         = "LOKI_INSECURE_SKIP_VERIFY"
	EnvPushEncoding     = "LOKI_PUSH_ENCODING"
)

// Env is the manifest's env_required list.
var Env = []pluginkit.EnvVar{
	{Name: EnvURL, Description: "Loki base URL, e.g. http://loki:3100 or https://logs-prod-012.grafana.net", Required: true},
	{Name: EnvTenantID, Description: "tenant sent as X-Scope-OrgID (multi-tenant Loki); unset = no header"},
	{Name: EnvUsername, Description: "basic-auth user (Grafana Cloud: the numeric user id)"},
	{Name: EnvPassword, Description: "basic-auth password (Grafana Cloud: an access-policy token)", Sensitive: true},
	{Name: EnvBearerToken, Description: "bearer token for a gateway in front of Loki (instead of basic auth)", Sensitive: true},
	{Name: EnvServiceName, Description: "value of the service_name stream label (default animus)"},
	{Name: EnvExtraLabels, Description: "static, low-cardinality stream labels: env=prod,host=a"},
	{Name: EnvStructuredMeta, Description: "auto|on|off: put id, target and source_name in structured metadata (default auto)"},
	{Name: EnvDefaultLookback, Description: "how far back a query without since reaches (default 24h)"},
	{Name: EnvMaxQueryWindow, Description: "largest query window; keep ≤ Loki's max_query_length (default 720h)"},
	{Name: EnvRetentionHint, Description: "Loki's retention, advertised in log_storage/schema (e.g. 30d); unset = unknown"},
	{Name: EnvTailMode, Description: "ws|poll: follow tails over Loki's websocket or by polling query_range (default ws)"},
	{Name: EnvTailPollInterval, Description: "poll interval of tails in poll mode (default 1s)"},
	{Name: EnvTimeout, Description: "timeout of one HTTP request to Loki (default 5s)"},
	{Name: EnvCAFile, Description: "PEM file of CA certificates to trust for an https LOKI_URL"},
	{Name: EnvInsecure, Description: "true skips TLS verification (testing only)"},
	{Name: EnvPushEncoding, Description: "protobuf|json: push body encoding (default protobuf, snappy-compressed)"},
}

// SMMode says whether entries carry structured metadata.
type SMMode string

// The structured metadata modes.
const (
	SMAuto SMMode = "auto" // use it; fall back to the json parser if Loki refuses it
	SMOn   SMMode = "on"   // use it; a refusal is an error
	SMOff  SMMode = "off"  // never send it; filter with | json
)

// Label is one static stream label.
type Label struct{ Name, Value string }

// Config is the validated configuration.
type Config struct {
	URL                *url.URL // nil when LOKI_URL is unset
	Missing            string   // what is missing when URL is nil
	TenantID           string
	Username, Password string
	BearerToken        string
	ServiceName        string
	ExtraLabels        []Label // sorted by name
	StructuredMetadata SMMode
	DefaultLookback    time.Duration
	MaxQueryWindow     time.Duration
	RetentionHint      time.Duration // 0 = unknown
	TailMode           string        // "ws" or "poll"
	TailPollInterval   time.Duration
	Timeout            time.Duration
	CAFile             string
	InsecureSkipVerify bool
	PushEncoding       string // "protobuf" or "json"
}

// Reserved stream labels the plugin sets itself.
var reserved = map[string]bool{"service_name": true, "source": true, "level": true}

var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// maxExtraLabels keeps the whole label set within Loki's 15 names.
const maxExtraLabels = 15 - 3

// Load reads the configuration through getenv. It always returns a usable
// Config (defaults where a value is bad), so --manifest works whatever
// the environment; the error lists every malformed value.
func Load(getenv func(string) string) (Config, error) {
	c := Config{
		ServiceName: "animus", StructuredMetadata: SMAuto, DefaultLookback: 24 * time.Hour,
		MaxQueryWindow: 720 * time.Hour, TailMode: "ws", TailPollInterval: time.Second,
		Timeout: 5 * time.Second, PushEncoding: "protobuf",
	}
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...)))
	}
	get := func(name string) string { return strings.TrimSpace(getenv(name)) }

	if raw := get(EnvURL); raw == "" {
		c.Missing = EnvURL + " unset"
	} else if u, err := url.Parse(strings.TrimRight(raw, "/")); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The value is not echoed: it may carry credentials (userinfo).
		bad(EnvURL, "want an http(s) base URL such as http://loki:3100")
		c.Missing = EnvURL + " invalid"
	} else {
		c.URL = u
	}
	c.TenantID = get(EnvTenantID)
	c.Username, c.Password, c.BearerToken = get(EnvUsername), getenv(EnvPassword), get(EnvBearerToken)
	switch {
	case c.Username != "" && c.Password == "":
		bad(EnvPassword, "must be set when %s is", EnvUsername)
	case c.Username == "" && c.Password != "":
		bad(EnvUsername, "must be set when %s is", EnvPassword)
	case c.Username != "" && c.BearerToken != "":
		bad(EnvBearerToken, "set either %s/%s or %s, not both", EnvUsername, EnvPassword, EnvBearerToken)
	}
	if v := get(EnvServiceName); v != "" {
		if len(v) > 2048 {
			bad(EnvServiceName, "longer than Loki's 2048-byte label value limit")
		} else {
			c.ServiceName = v
		}
	}
	if v := get(EnvExtraLabels); v != "" {
		ls, err := ParseLabels(v)
		if err != nil {
			bad(EnvExtraLabels, "%v", err)
		}
		c.ExtraLabels = ls
	}
	switch v := SMMode(strings.ToLower(get(EnvStructuredMeta))); v {
	case "":
	case SMAuto, SMOn, SMOff:
		c.StructuredMetadata = v
	default:
		bad(EnvStructuredMeta, "want auto, on or off, got %q", v)
	}
	dur := func(name string, dst *time.Duration, min time.Duration) {
		v := get(name)
		if v == "" {
			return
		}
		d, err := ParseDuration(v)
		if err != nil || d < min {
			bad(name, "want a duration of at least %s such as 24h or 30d, got %q", min, v)
			return
		}
		*dst = d
	}
	dur(EnvDefaultLookback, &c.DefaultLookback, time.Second)
	dur(EnvMaxQueryWindow, &c.MaxQueryWindow, time.Second)
	dur(EnvRetentionHint, &c.RetentionHint, time.Second)
	dur(EnvTailPollInterval, &c.TailPollInterval, 50*time.Millisecond)
	dur(EnvTimeout, &c.Timeout, 50*time.Millisecond)
	if c.DefaultLookback > c.MaxQueryWindow {
		c.DefaultLookback = c.MaxQueryWindow
	}
	switch v := strings.ToLower(get(EnvTailMode)); v {
	case "":
	case "ws", "poll":
		c.TailMode = v
	default:
		bad(EnvTailMode, "want ws or poll, got %q", v)
	}
	switch v := strings.ToLower(get(EnvPushEncoding)); v {
	case "":
	case "protobuf", "json":
		c.PushEncoding = v
	default:
		bad(EnvPushEncoding, "want protobuf or json, got %q", v)
	}
	if v := get(EnvCAFile); v != "" {
		if _, err := os.Stat(v); err != nil {
			bad(EnvCAFile, "cannot read the CA file")
		}
		c.CAFile = v
	}
	if v := get(EnvInsecure); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad(EnvInsecure, "want true or false, got %q", v)
		}
		c.InsecureSkipVerify = b
	}
	return c, errors.Join(errs...)
}

// ParseLabels parses "name=value,name=value" into sorted, validated
// labels: Loki's name rule, no reserved or duplicate names, non-empty
// values of at most 2048 bytes, at most 12 labels.
func ParseLabels(s string) ([]Label, error) {
	var out []Label
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, value, ok := strings.Cut(part, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		switch {
		case !ok:
			return nil, fmt.Errorf("%q is not name=value", part)
		case !labelName.MatchString(name) || strings.HasPrefix(name, "__"):
			return nil, fmt.Errorf("label name %q must match [a-zA-Z_][a-zA-Z0-9_]* and not start with __", name)
		case reserved[name]:
			return nil, fmt.Errorf("label %q is set by the plugin", name)
		case seen[name]:
			return nil, fmt.Errorf("label %q given twice", name)
		case value == "" || len(value) > 2048:
			return nil, fmt.Errorf("label %q needs a value of 1 to 2048 bytes", name)
		}
		seen[name] = true
		out = append(out, Label{name, value})
	}
	if len(out) > maxExtraLabels {
		return nil, fmt.Errorf("%d labels; at most %d (Loki allows 15 names per stream, 3 are the plugin's)", len(out), maxExtraLabels)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ParseDuration is time.ParseDuration plus whole days ("30d") and weeks
// ("2w"), the units retention is usually written in.
func ParseDuration(s string) (time.Duration, error) {
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			v, err := strconv.Atoi(n)
			if err != nil || v < 0 {
				return 0, fmt.Errorf("invalid duration %q", s)
			}
			return time.Duration(v) * unit, nil
		}
	}
	return time.ParseDuration(s)
}
