package slackapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/slack-go/slack"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// PostMessageParams are slack/chat_post_message's params.
type PostMessageParams struct {
	Channel  string          `json:"channel"`
	Text     string          `json:"text,omitempty"`
	ThreadTS string          `json:"thread_ts,omitempty"`
	Blocks   json.RawMessage `json:"blocks,omitempty"`
}

// PostEphemeralParams are slack/chat_post_ephemeral's params.
type PostEphemeralParams struct {
	Channel string          `json:"channel"`
	User    string          `json:"user"`
	Text    string          `json:"text,omitempty"`
	Blocks  json.RawMessage `json:"blocks,omitempty"`
}

// SendDMParams are slack/send_dm's params.
type SendDMParams struct {
	UserID string          `json:"user_id"`
	Text   string          `json:"text,omitempty"`
	Blocks json.RawMessage `json:"blocks,omitempty"`
}

// The params are decoded into pointers so that a request without params (or
// with null) reaches Validate as nil and is answered "missing params", as
// the reference does, instead of a confusing "channel must not be empty".
var errMissingParams = pluginkit.InvalidParams("missing params")

// Validate checks params before any HTTP request.
func (p *PostMessageParams) Validate() error {
	if p == nil {
		return errMissingParams
	}
	if err := nonBlank("channel", p.Channel); err != nil {
		return err
	}
	return needContent(p.Text, p.Blocks)
}

// Validate checks params before any HTTP request.
func (p *PostEphemeralParams) Validate() error {
	if p == nil {
		return errMissingParams
	}
	if err := nonBlank("channel", p.Channel); err != nil {
		return err
	}
	if err := nonBlank("user", p.User); err != nil {
		return err
	}
	return needContent(p.Text, p.Blocks)
}

// Validate checks params before any HTTP request.
func (p *SendDMParams) Validate() error {
	if p == nil {
		return errMissingParams
	}
	if err := needContent(p.Text, p.Blocks); err != nil {
		return err
	}
	return nonBlank("user_id", p.UserID)
}

func nonBlank(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return pluginkit.InvalidParams("%s must not be empty", field)
	}
	return nil
}

// needContent requires text or blocks, and blocks (when given) to be an
// array of block objects slack-go can send.
func needContent(text string, blocks json.RawMessage) error {
	set, err := decodeBlocks(blocks)
	if err != nil {
		return err
	}
	if strings.TrimSpace(text) == "" && len(set) == 0 {
		return pluginkit.InvalidParams("text or blocks must not be empty")
	}
	return nil
}

func decodeBlocks(raw json.RawMessage) ([]slack.Block, error) {
	if rustjson.IsNull(raw) {
		return nil, nil
	}
	raw = bytes.TrimSpace(raw)
	if raw[0] != '[' {
		return nil, pluginkit.InvalidParams("invalid params: field %q: expected array", "blocks").WithData("field", "blocks")
	}
	var b slack.Blocks
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, pluginkit.InvalidParams("invalid params: field %q: %v", "blocks", err).WithData("field", "blocks")
	}
	return b.BlockSet, nil
}

func (c *Client) requireBotToken() error {
	if c.botToken == "" {
		return pluginkit.Errorf(CategoryMissingToken, "SLACK_BOT_TOKEN unset")
	}
	return nil
}

// messageForm is the form slack-go's MsgOptionText (unescaped), MsgOptionTS
// and MsgOptionBlocks produce, blocks re-encoded from slack-go's types as
// before, so Slack sees the same request it always did.
func messageForm(channel, text, threadTS string, blocks json.RawMessage) (url.Values, error) {
	form := url.Values{"channel": {channel}}
	if text != "" {
		form.Set("text", text)
	}
	if threadTS != "" {
		form.Set("thread_ts", threadTS)
	}
	set, err := decodeBlocks(blocks)
	if err != nil {
		return nil, err
	}
	if len(set) > 0 {
		b, err := json.Marshal(set)
		if err != nil {
			return nil, pluginkit.InvalidParams("invalid params: field %q: %v", "blocks", err).WithData("field", "blocks")
		}
		form.Set("blocks", string(b))
	}
	return form, nil
}

// PostMessage is slack/chat_post_message: chat.postMessage; the result is
// Slack's JSON response (ok, channel, ts, message), passed through as sent.
func (c *Client) PostMessage(ctx context.Context, p *PostMessageParams) (json.RawMessage, error) {
	if err := c.requireBotToken(); err != nil {
		return nil, err
	}
	form, err := messageForm(p.Channel, p.Text, p.ThreadTS, p.Blocks)
	if err != nil {
		return nil, err
	}
	ans, err := c.call(ctx, "chat.postMessage", form)
	if err != nil {
		return nil, err
	}
	c.posted("chat.postMessage", ans, "ts")
	return ans.raw, nil
}

// PostEphemeral is slack/chat_post_ephemeral: chat.postEphemeral; the
// result is Slack's JSON response (ok, message_ts), passed through as sent.
func (c *Client) PostEphemeral(ctx context.Context, p *PostEphemeralParams) (json.RawMessage, error) {
	if err := c.requireBotToken(); err != nil {
		return nil, err
	}
	form, err := messageForm(p.Channel, p.Text, "", p.Blocks)
	if err != nil {
		return nil, err
	}
	form.Set("user", p.User)
	ans, err := c.call(ctx, "chat.postEphemeral", form)
	if err != nil {
		return nil, err
	}
	c.posted("chat.postEphemeral", ans, "message_ts")
	return ans.raw, nil
}

// posted logs a successful post. An ok:true without the timestamp callers
// thread replies on is still a success (the message exists, and failing
// would make a retrying host post it twice), but it is worth a warning.
func (c *Client) posted(method string, ans answer, tsField string) {
	ts := ans.str(tsField)
	if ts == "" {
		c.log.Warn("slack accepted the message but its answer has no "+tsField, "method", method)
		return
	}
	c.log.Debug("slack message posted", "method", method, "channel", ans.str("channel"), tsField, ts)
}

// SendDM is slack/send_dm: conversations.open with the user, then
// chat.postMessage into the returned channel; the result is the
// chat.postMessage response.
func (c *Client) SendDM(ctx context.Context, p *SendDMParams) (json.RawMessage, error) {
	if err := c.requireBotToken(); err != nil {
		return nil, err
	}
	// return_im=false is what slack-go sent: the answer then carries no
	// latest message, and only channel.id is read anyway.
	ans, err := c.call(ctx, "conversations.open", url.Values{"users": {p.UserID}, "return_im": {"false"}})
	if err != nil {
		return nil, err
	}
	channel := ans.str("channel", "id")
	if channel == "" {
		return nil, decodeError("conversations.open", decodeErr("conversations.open returned no channel.id"))
	}
	return c.PostMessage(ctx, &PostMessageParams{Channel: channel, Text: p.Text, Blocks: p.Blocks})
}
