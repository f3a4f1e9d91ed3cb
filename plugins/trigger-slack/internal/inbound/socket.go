package inbound

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/slackapi"
)

// Defaults of Socket.
const (
	// DefaultAuthRetry is the wait after Slack rejects the app token:
	// long enough not to hammer Slack, short enough to pick up a rotated
	// token without a restart.
	DefaultAuthRetry = 5 * time.Minute
	// ackTimeout bounds queueing one ack; Slack redelivers after 3 s.
	ackTimeout = 3 * time.Second
)

// Socket runs Socket Mode until its context ends.
type Socket struct {
	API    *slack.Client
	Logger *slog.Logger
	Status *Status
	Sink   Sink
	// AuthRetry is the wait after a rejected app token (default 5 min).
	AuthRetry time.Duration
	// PingInterval is how long the connection may go without a websocket
	// PING from Slack before it is considered dead (0: slack-go's 30 s).
	PingInterval time.Duration
	// Debug turns on slack-go's own debug logs (to Logger, at debug level).
	Debug bool
}

// Run connects and delivers events until ctx ends. It never returns
// early: a rejected token is retried every AuthRetry.
func (s *Socket) Run(ctx context.Context) {
	if s.AuthRetry <= 0 {
		s.AuthRetry = DefaultAuthRetry
	}
	for {
		err := s.runOnce(ctx)
		if ctx.Err() != nil {
			s.Status.Set(PhaseStopped, "")
			return
		}
		msg := fmt.Sprintf("socket mode: Slack rejected the app token (%v); retrying in %v", err, s.AuthRetry)
		s.Status.Set(PhaseAuthFailed, msg)
		s.Logger.Error("socket mode stopped", "error", err, "retry_in", s.AuthRetry.String())
		t := time.NewTimer(s.AuthRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			s.Status.Set(PhaseStopped, "")
			return
		case <-t.C:
		}
	}
}

// runOnce runs one slack-go client. slack-go reconnects internally and
// returns only on cancellation or a fatal auth error.
func (s *Socket) runOnce(ctx context.Context) error {
	opts := []socketmode.Option{
		socketmode.OptionLog(slackapi.LogAdapter(s.Logger)),
		socketmode.OptionDebug(s.Debug),
	}
	if s.PingInterval > 0 {
		opts = append(opts, socketmode.OptionPingInterval(s.PingInterval))
	}
	client := socketmode.New(s.API, opts...)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.consume(runCtx, client)
	}()
	err := client.RunContext(runCtx)
	cancel()
	<-done
	return err
}

// consume drains client.Events. slack-go blocks when its 50-slot channel is
// full, which would also stall acks, so this loop only acks and hands off.
func (s *Socket) consume(ctx context.Context, client *socketmode.Client) {
	for {
		select {
		case <-ctx.Done():
			return
		case evt, ok := <-client.Events:
			if !ok {
				return
			}
			s.handle(ctx, client, evt)
		}
	}
}

func (s *Socket) handle(ctx context.Context, client *socketmode.Client, evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeConnecting:
		s.Status.Connecting()
	case socketmode.EventTypeConnected:
		s.Status.Connected()
		s.Logger.Info("socket mode connected", "connections", s.Status.Get().Connections)
	case socketmode.EventTypeConnectionError:
		msg := "socket mode connection error"
		if ce, ok := evt.Data.(*slack.ConnectionErrorEvent); ok && ce.ErrorObj != nil {
			msg = "socket mode: " + ce.ErrorObj.Error()
		}
		s.Status.Set(PhaseReconnecting, msg)
		s.Logger.Warn("socket mode connection failed; slack-go retries with backoff", "error", msg)
	case socketmode.EventTypeInvalidAuth:
		s.Status.Set(PhaseAuthFailed, "socket mode: invalid_auth")
	case socketmode.EventTypeEventsAPI:
		s.ack(ctx, client, evt.Request)
		s.deliver(ctx, evt.Request)
	case socketmode.EventTypeSlashCommand, socketmode.EventTypeInteractive:
		// Not events this plugin maps, but Slack redelivers unacked ones.
		s.ack(ctx, client, evt.Request)
	case socketmode.EventTypeErrorBadMessage:
		s.badMessage(ctx, client, evt)
	case socketmode.EventTypeIncomingError, socketmode.EventTypeErrorWriteFailed:
		s.Logger.Warn("socket mode error", "type", string(evt.Type), "error", fmt.Sprint(evt.Data))
	default:
		s.Logger.Debug("socket mode event", "type", string(evt.Type))
	}
}

func (s *Socket) ack(ctx context.Context, client *socketmode.Client, req *socketmode.Request) {
	if req == nil || req.EnvelopeID == "" {
		return
	}
	actx, cancel := context.WithTimeout(ctx, ackTimeout)
	defer cancel()
	if err := client.AckCtx(actx, req.EnvelopeID, nil); err != nil {
		s.Logger.Warn("socket mode ack failed; Slack will redeliver", "envelope_id", req.EnvelopeID, "error", err)
	}
}

func (s *Socket) deliver(ctx context.Context, req *socketmode.Request) {
	if req == nil {
		return
	}
	_ = s.Sink(ctx, Delivery{
		Payload:     req.Payload,
		Transport:   "socket",
		Retry:       req.RetryAttempt,
		RetryReason: req.RetryReason,
		Received:    time.Now(),
	})
}

// badMessage handles a frame slack-go could not parse into its typed
// structs, which happens for inner event types it does not know or fields
// of unexpected types. The envelope is still acked, or Slack would redeliver
// it forever, and an events_api payload is still delivered: the mapping
// works on raw JSON and decides for itself.
func (s *Socket) badMessage(ctx context.Context, client *socketmode.Client, evt socketmode.Event) {
	bad, ok := evt.Data.(*socketmode.ErrorBadMessage)
	if !ok {
		return
	}
	var req socketmode.Request
	if err := json.Unmarshal(bad.Message, &req); err != nil {
		s.Logger.Warn("socket mode frame is not JSON", "error", bad.Cause)
		return
	}
	s.Logger.Debug("socket mode frame slack-go could not type", "type", req.Type, "error", bad.Cause)
	s.ack(ctx, client, &req)
	if req.Type == socketmode.RequestTypeEventsAPI {
		s.deliver(ctx, &req)
	}
}
