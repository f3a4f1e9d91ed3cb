package slackapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// Defaults of Options.
const (
	DefaultMaxRetryWait = 5 * time.Second
	// requestTimeout bounds one HTTP exchange with Slack; callers' contexts
	// usually end sooner.
	requestTimeout = 30 * time.Second
)

// Options configure a Client.
type Options struct {
	BotToken string
	AppToken string
	// APIURL is the Web API base with a trailing slash (slack-go's form).
	APIURL string
	Logger *slog.Logger
	// MaxRetryWait is the longest Retry-After honoured with the one retry;
	// a longer one is reported at once instead of holding the phase.
	MaxRetryWait time.Duration
	// Transport is the HTTP transport (default http.DefaultTransport).
	Transport http.RoundTripper
}

// Client is the shared Slack client: slack-go for Socket Mode, and the
// plugin's own lenient Web API calls (webapi.go) for everything it asks
// Slack itself.
type Client struct {
	api          *slack.Client
	httpc        *http.Client
	apiURL       string
	botToken     string // sent in request bodies only; never logged
	log          *slog.Logger
	maxRetryWait time.Duration
	sleep        func(ctx context.Context, d time.Duration) error
}

// New builds the client. It makes no request.
func New(o Options) *Client {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxRetryWait <= 0 {
		o.MaxRetryWait = DefaultMaxRetryWait
	}
	if o.Transport == nil {
		o.Transport = http.DefaultTransport
	}
	if o.APIURL == "" {
		o.APIURL = slack.APIURL
	}
	if !strings.HasSuffix(o.APIURL, "/") { // method names are appended to it
		o.APIURL += "/"
	}
	httpc := &http.Client{Transport: o.Transport, Timeout: requestTimeout}
	api := slack.New(o.BotToken,
		slack.OptionAppLevelToken(o.AppToken),
		slack.OptionAPIURL(o.APIURL),
		slack.OptionHTTPClient(httpc),
		// slack-go's default logger writes to the process's stderr through
		// the standard log package; route it through our JSON logger.
		slack.OptionLog(LogAdapter(o.Logger)),
	)
	return &Client{api: api, httpc: httpc, apiURL: o.APIURL, botToken: o.BotToken, log: o.Logger,
		maxRetryWait: o.MaxRetryWait, sleep: sleepCtx}
}

// API is the slack-go client, for socketmode.New.
func (c *Client) API() *slack.Client { return c.api }

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Identity is who the bot token belongs to.
type Identity struct {
	TeamID string
	UserID string
	BotID  string
}

// authErrors are Slack's answers that mean the token itself is bad; no
// retry can fix them.
var authErrors = map[string]bool{
	"invalid_auth": true, "not_authed": true, "account_inactive": true,
	"token_revoked": true, "token_expired": true, "not_allowed_token_type": true,
}

// AuthError reports whether err is Slack rejecting a token, and its code.
func AuthError(err error) (string, bool) {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) && authErrors[se.Err] {
		return se.Err, true
	}
	var pe *pluginkit.Error
	if errors.As(err, &pe) {
		if code, ok := pe.Data["slack_error"].(string); ok && authErrors[code] {
			return code, true
		}
	}
	return "", false
}

// Identity calls auth.test with the bot token.
func (c *Client) Identity(ctx context.Context) (Identity, error) {
	ans, err := c.call(ctx, "auth.test", nil)
	if err != nil {
		return Identity{}, err
	}
	return Identity{TeamID: ans.str("team_id"), UserID: ans.str("user_id"), BotID: ans.str("bot_id")}, nil
}

// logAdapter is the Output(calldepth, s) logger slack-go and socketmode
// accept, writing to the plugin's stderr JSON log at debug level.
type logAdapter struct{ log *slog.Logger }

// LogAdapter wraps l for slack.OptionLog and socketmode.OptionLog. Nothing
// slack-go logs can reach stdout this way.
func LogAdapter(l *slog.Logger) interface{ Output(int, string) error } { return logAdapter{l} }

func (a logAdapter) Output(_ int, s string) error {
	a.log.Debug(strings.TrimSpace(s), "source", "slack-go")
	return nil
}
