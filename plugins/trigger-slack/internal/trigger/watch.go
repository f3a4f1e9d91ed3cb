package trigger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"syscall"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/inbound"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/mapping"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/slackapi"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/store"
)

// identityTimeout bounds auth.test inside trigger/watch: the testkit
// waits 3 s for the whole watch, and the daemon does not wait at all.
const identityTimeout = 2 * time.Second

// defaultIdentityRetry is how often a failed auth.test is retried in the
// background (the bot_id filter works meanwhile).
const defaultIdentityRetry = 30 * time.Second

// WatchParams are TriggerWatchParams. config is forwarded from workflow
// YAML by hosts that do so; only config.trigger_id is read. cursor is
// ignored: this backend does not resume (supports_resume false).
type WatchParams struct {
	Config json.RawMessage `json:"config,omitempty"`
	Cursor json.RawMessage `json:"cursor,omitempty"`
}

// Validate checks config's shape and reads config.trigger_id.
func (p *WatchParams) Validate() error {
	_, err := p.triggerID()
	return err
}

func (p *WatchParams) triggerID() (string, error) {
	if rustjson.IsNull(p.Config) {
		return "", nil
	}
	raw := bytes.TrimSpace(p.Config)
	var cfg map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &cfg) != nil {
		return "", pluginkit.InvalidParams("invalid params: field %q: expected object", "config").WithData("field", "config")
	}
	v, ok := cfg["trigger_id"]
	if !ok || rustjson.IsNull(v) {
		return "", nil
	}
	var id string
	if json.Unmarshal(v, &id) != nil {
		return "", pluginkit.InvalidParams("invalid params: field %q: expected string", "config.trigger_id").WithData("field", "config.trigger_id")
	}
	return strings.TrimSpace(id), nil
}

// WatchResult is {"watching": true}.
type WatchResult struct {
	Watching bool `json:"watching"`
}

// Watch opens the event stream, or fails before acknowledging when it
// cannot (spec §7.3: no stream that fails later). Missing configuration is
// -32603 "backend unavailable: SLACK_APP_TOKEN unset" with category
// unavailable, which the testkit and the daemon read as "not configured".
// A second watch on the same connection acknowledges the running stream.
func (s *Service) Watch(ctx context.Context, p WatchParams) (WatchResult, error) {
	fromWatch, _ := p.triggerID() // validated
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watching.Load() {
		return WatchResult{Watching: true}, nil
	}
	if err := s.cfg.WatchCheck(); err != nil {
		return WatchResult{}, configError(err)
	}
	mention, dm, err := s.cfg.TriggerIDs(fromWatch)
	if err != nil {
		return WatchResult{}, configError(err)
	}
	st, err := store.Open(ctx, s.cfg.DedupPath(s.projectRoot), store.Options{})
	if err != nil {
		s.log.Error("cannot open the dedup store", "error", err)
		return WatchResult{}, pluginkit.Unavailable("dedup store cannot be opened").Wrap(err)
	}
	if err := s.learnIdentity(ctx); err != nil {
		st.Close()
		return WatchResult{}, err
	}
	start, err := s.transport()
	if err != nil {
		st.Close()
		return WatchResult{}, err
	}
	s.store.Store(st)
	s.rules = mapping.Rules{MentionTriggerID: mention, DMTriggerID: dm, Channels: s.cfg.Channels, IgnoreBots: s.cfg.IgnoreBots}
	peer := pluginkit.PeerFrom(ctx)
	peer.Go(s.emit)
	peer.Go(start)
	if s.identity.Load() == nil {
		peer.Go(s.retryIdentity)
	}
	s.watching.Store(true)
	s.log.Info("watching", "mode", string(s.cfg.Mode), "trigger_id_mention", mention, "trigger_id_dm", dm)
	return WatchResult{Watching: true}, nil
}

func configError(err error) error {
	if errors.Is(err, config.ErrUnset) {
		return pluginkit.Unavailable("%s", err.Error())
	}
	return pluginkit.Errorf(pluginkit.CategoryUnavailable, "invalid configuration: %s", err.Error())
}

// learnIdentity asks Slack who the bot is, so its own messages can be
// recognised. A rejected token fails the watch (it cannot work); a slow or
// unreachable Slack does not (the stream reconnects by itself), and the
// question is retried in the background.
func (s *Service) learnIdentity(ctx context.Context) error {
	ictx, cancel := context.WithTimeout(ctx, identityTimeout)
	defer cancel()
	id, err := s.slack.Identity(ictx)
	if err == nil {
		s.setIdentity(id)
		return nil
	}
	if code, ok := slackapi.AuthError(err); ok {
		return pluginkit.Unavailable("%s auth failed: %s", config.EnvBotToken, code).Wrap(err)
	}
	s.log.Warn("auth.test failed; the bot's own user id is unknown until it succeeds", "error", err)
	return nil
}

func (s *Service) setIdentity(id slackapi.Identity) {
	s.identity.Store(&mapping.Identity{UserID: id.UserID, BotID: id.BotID})
	s.log.Debug("bot identity", "user_id", id.UserID, "bot_id", id.BotID, "team_id", id.TeamID)
}

func (s *Service) retryIdentity(ctx context.Context) {
	for s.identity.Load() == nil {
		t := time.NewTimer(s.identityRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		id, err := s.slack.Identity(ctx)
		if err == nil {
			s.setIdentity(id)
			return
		}
		s.log.Warn("auth.test failed again", "error", err)
	}
}

// transport prepares the configured inbound transport and returns the
// function that runs it for the life of the connection. http mode binds
// its port here so that a port in use fails the watch.
func (s *Service) transport() (func(context.Context), error) {
	if s.cfg.Mode == config.ModeHTTP {
		h := &inbound.HTTP{Addr: s.cfg.EventsAddr, Path: s.cfg.EventsPath, Secret: s.cfg.SigningSecret,
			Logger: s.log, Status: s.status, Sink: s.sink}
		ln, err := h.Listen()
		if err != nil {
			if errors.Is(err, syscall.EADDRINUSE) {
				return nil, pluginkit.Errorf(pluginkit.CategoryAddressInUse, "cannot listen on %s: address in use", s.cfg.EventsAddr).Wrap(err)
			}
			return nil, pluginkit.Unavailable("cannot listen on %s", s.cfg.EventsAddr).Wrap(err)
		}
		s.status.Set(inbound.PhaseListening, "")
		return func(ctx context.Context) { h.Serve(ctx, ln) }, nil
	}
	s.status.Set(inbound.PhaseConnecting, "")
	sock := &inbound.Socket{API: s.slack.API(), Logger: s.log, Status: s.status, Sink: s.sink,
		Debug: s.log.Enabled(context.Background(), slog.LevelDebug)}
	return sock.Run, nil
}

// sink queues a delivery for the emitter, waiting while the queue is full.
func (s *Service) sink(ctx context.Context, d inbound.Delivery) error {
	select {
	case s.queue <- d:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
