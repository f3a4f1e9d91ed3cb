package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// Mode is the inbound transport.
type Mode string

// The two transports: Socket Mode (a websocket the plugin opens) and the
// Events API (signed HTTP requests Slack sends to the plugin).
const (
	ModeSocket Mode = "socket"
	ModeHTTP   Mode = "http"
)

// Defaults of the optional variables.
const (
	DefaultAPIBase    = "https://slack.com/api"
	DefaultEventsAddr = "127.0.0.1:3000"
	DefaultEventsPath = "/slack/events"
	// dedupFile is the seen-set's file name inside the state directory.
	dedupFile = "dedup.db"
)

// Config is the plugin's whole configuration, read once at start.
type Config struct {
	AppToken      string
	BotToken      string
	SigningSecret string

	// APIBase is the Web API base without a trailing slash.
	APIBase string
	// Channels is the allowlist of channel ids; empty allows every channel.
	Channels map[string]bool

	TriggerID        string
	TriggerIDMention string
	TriggerIDDM      string

	Mode       Mode
	EventsAddr string
	EventsPath string

	StateDir   string
	IgnoreBots bool

	// problems are values that are set but unusable. They surface on
	// trigger/watch and in health/check rather than at start, so the
	// manifest probe and health checks keep working.
	problems []error
}

// Load reads the configuration through getenv (os.Getenv in production).
// Empty values count as unset, as in the reference plugin.
func Load(getenv func(string) string) Config {
	get := func(name string) string { return strings.TrimSpace(getenv(name)) }
	c := Config{
		AppToken:         get(EnvAppToken),
		BotToken:         get(EnvBotToken),
		SigningSecret:    get(EnvSigningSecret),
		TriggerID:        get(EnvTriggerID),
		TriggerIDMention: get(EnvTriggerIDMention),
		TriggerIDDM:      get(EnvTriggerIDDM),
		StateDir:         get(EnvStateDir),
		Channels:         map[string]bool{},
	}
	c.APIBase = c.parseAPIBase(get(EnvAPIBase))
	for _, ch := range strings.Split(get(EnvFilterChannels), ",") {
		if ch = strings.TrimSpace(ch); ch != "" {
			c.Channels[ch] = true
		}
	}
	switch m := strings.ToLower(get(EnvMode)); m {
	case "", string(ModeSocket):
		c.Mode = ModeSocket
	case string(ModeHTTP):
		c.Mode = ModeHTTP
	default:
		c.Mode = ModeSocket
		c.problems = append(c.problems, fmt.Errorf("%s must be socket or http, got %q", EnvMode, m))
	}
	c.EventsAddr = get(EnvEventsAddr)
	if c.EventsAddr == "" {
		c.EventsAddr = DefaultEventsAddr
	} else if _, _, err := net.SplitHostPort(c.EventsAddr); err != nil {
		c.problems = append(c.problems, fmt.Errorf("%s must be host:port, got %q", EnvEventsAddr, c.EventsAddr))
	}
	c.EventsPath = get(EnvEventsPath)
	if c.EventsPath == "" {
		c.EventsPath = DefaultEventsPath
	} else if !strings.HasPrefix(c.EventsPath, "/") {
		c.problems = append(c.problems, fmt.Errorf("%s must start with /, got %q", EnvEventsPath, c.EventsPath))
	}
	c.IgnoreBots = true
	if v := get(EnvIgnoreBots); v != "" {
		b, ok := parseBool(v)
		if !ok {
			c.problems = append(c.problems, fmt.Errorf("%s must be true or false, got %q", EnvIgnoreBots, v))
		} else {
			c.IgnoreBots = b
		}
	}
	return c
}

func (c *Config) parseAPIBase(v string) string {
	if v == "" {
		return DefaultAPIBase
	}
	v = strings.TrimRight(v, "/")
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		c.problems = append(c.problems, fmt.Errorf("%s must be an http(s) URL, got %q", EnvAPIBase, v))
		return DefaultAPIBase
	}
	return v
}

func parseBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "yes", "on":
		return true, true
	case "no", "off":
		return false, true
	}
	b, err := strconv.ParseBool(v)
	return b, err == nil
}

// SlackAPIURL is APIBase in the form slack-go's OptionAPIURL expects: with
// a trailing slash, so that method names append to it.
func (c Config) SlackAPIURL() string { return c.APIBase + "/" }

// Problem reports the first set-but-unusable value, or nil.
func (c Config) Problem() error {
	if len(c.problems) == 0 {
		return nil
	}
	return c.problems[0]
}

// ErrUnset is wrapped by every missing-variable error, so callers can tell
// missing configuration (the host's "skip" case) from a broken one.
var ErrUnset = errors.New("unset")

func unset(name string) error { return fmt.Errorf("%s %w", name, ErrUnset) }

// WatchCheck is what trigger/watch needs before it opens the stream: usable
// values, then the credentials of the selected transport. The error names
// the variable, e.g. "SLACK_APP_TOKEN unset".
func (c Config) WatchCheck() error {
	if err := c.Problem(); err != nil {
		return err
	}
	if c.Mode == ModeHTTP {
		if c.SigningSecret == "" {
			return unset(EnvSigningSecret)
		}
	} else if c.AppToken == "" {
		return unset(EnvAppToken)
	}
	if c.BotToken == "" {
		return unset(EnvBotToken)
	}
	return nil
}

// TriggerIDs resolves the trigger id stamped on each kind: a trigger_id
// from the watch's config wins for every kind (it names the one workflow
// trigger this stream belongs to); otherwise the per-kind variable, then
// SLACK_TRIGGER_ID. Every kind must resolve: an event without trigger_id
// is acked "unmatched" and dropped by the daemon, which is exactly the
// silent failure this plugin refuses.
func (c Config) TriggerIDs(fromWatch string) (mention, dm string, err error) {
	if fromWatch != "" {
		return fromWatch, fromWatch, nil
	}
	mention, dm = c.TriggerIDMention, c.TriggerIDDM
	if mention == "" {
		mention = c.TriggerID
	}
	if dm == "" {
		dm = c.TriggerID
	}
	if mention == "" || dm == "" {
		return "", "", fmt.Errorf("%w (set it to the id of the workflow trigger, or set both %s and %s)",
			unset(EnvTriggerID), EnvTriggerIDMention, EnvTriggerIDDM)
	}
	return mention, dm, nil
}

// DedupPath is the seen-set's database file: under SLACK_STATE_DIR when
// set (relative paths are taken from the project root, the plugin's cwd),
// else under the project's .animus directory.
func (c Config) DedupPath(projectRoot string) string {
	return filepath.Join(pluginkit.ProjectPath(projectRoot, c.StateDir, ".animus/trigger-slack"), dedupFile)
}
