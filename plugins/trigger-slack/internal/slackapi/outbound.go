package slackapi

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/slack-go/slack"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
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
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
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
	if !c.hasBotToken {
		return pluginkit.Errorf(CategoryMissingToken, "SLACK_BOT_TOKEN unset")
	}
	return nil
}

func messageOptions(text, threadTS string, blocks json.RawMessage) []slack.MsgOption {
	var opts []slack.MsgOption
	if text != "" {
		opts = append(opts, slack.MsgOptionText(text, false))
	}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	if set, _ := decodeBlocks(blocks); len(set) > 0 { // validated already
		opts = append(opts, slack.MsgOptionBlocks(set...))
	}
	return opts
}

// PostMessage is slack/chat_post_message: chat.postMessage; the result is
// Slack's JSON response (ok, channel, ts, message).
func (c *Client) PostMessage(ctx context.Context, p *PostMessageParams) (json.RawMessage, error) {
	if err := c.requireBotToken(); err != nil {
		return nil, err
	}
	return c.call(ctx, "chat.postMessage", func(ctx context.Context) error {
		_, _, err := c.api.PostMessageContext(ctx, p.Channel, messageOptions(p.Text, p.ThreadTS, p.Blocks)...)
		return err
	})
}

// PostEphemeral is slack/chat_post_ephemeral: chat.postEphemeral; the
// result is Slack's JSON response (ok, message_ts).
func (c *Client) PostEphemeral(ctx context.Context, p *PostEphemeralParams) (json.RawMessage, error) {
	if err := c.requireBotToken(); err != nil {
		return nil, err
	}
	return c.call(ctx, "chat.postEphemeral", func(ctx context.Context) error {
		_, err := c.api.PostEphemeralContext(ctx, p.Channel, p.User, messageOptions(p.Text, "", p.Blocks)...)
		return err
	})
}

// SendDM is slack/send_dm: conversations.open with the user, then
// chat.postMessage into the returned channel; the result is the
// chat.postMessage response.
func (c *Client) SendDM(ctx context.Context, p *SendDMParams) (json.RawMessage, error) {
	if err := c.requireBotToken(); err != nil {
		return nil, err
	}
	var channel string
	if _, err := c.call(ctx, "conversations.open", func(ctx context.Context) error {
		ch, _, _, err := c.api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{p.UserID}})
		if err == nil {
			if ch == nil || ch.ID == "" {
				return decodeErr("conversations.open returned no channel.id")
			}
			channel = ch.ID
		}
		return err
	}); err != nil {
		return nil, err
	}
	return c.PostMessage(ctx, &PostMessageParams{Channel: channel, Text: p.Text, Blocks: p.Blocks})
}
