package trigger

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/inbound"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/mapping"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/slackapi"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/store"
)

// queueSize bounds deliveries waiting for the emitter. Beyond it the
// transport waits, which for Socket Mode also delays acks; Slack then
// redelivers and the seen-set absorbs it, so nothing is lost either way.
const queueSize = 1024

// Service is the plugin's state for one connection.
type Service struct {
	cfg config.Config
	log *slog.Logger

	slack       *slackapi.Client
	notify      func(method string, params any) error
	projectRoot string

	mu       sync.Mutex    // serialises trigger/watch
	watching atomic.Bool   // read by health/check without waiting for a watch in progress
	rules    mapping.Rules // trigger ids and filters; Self is filled per batch
	status   *inbound.Status
	store    atomic.Pointer[store.Store]
	queue    chan inbound.Delivery

	identity atomic.Pointer[mapping.Identity]
	storeErr atomic.Pointer[string] // last seen-set failure, for health
	stats    Stats

	// identityRetry is the wait between background auth.test attempts
	// (defaultIdentityRetry; a field so tests need not wait that long).
	identityRetry time.Duration
}

// Stats counts what the emitter did (for tests and debug logs).
type Stats struct {
	Emitted    atomic.Int64
	Duplicates atomic.Int64
	Dropped    atomic.Int64
	Acks       atomic.Int64
}

// New returns a Service for cfg. Nothing is opened until the host asks.
func New(cfg config.Config) *Service {
	return &Service{
		cfg:    cfg,
		log:    slog.New(slog.DiscardHandler),
		status: &inbound.Status{},
		queue:  make(chan inbound.Delivery, queueSize),

		identityRetry: defaultIdentityRetry,
	}
}

// Register adds the handlers to mux, in the order capabilities list them.
func (s *Service) Register(mux *pluginkit.Mux) {
	pluginkit.Handle(mux, "trigger/watch", s.Watch)
	pluginkit.Handle(mux, "trigger/schema", s.Schema)
	pluginkit.Handle(mux, "trigger/ack", s.Ack)
	pluginkit.HandleNotification(mux, "trigger/ack", s.AckNotification)
	pluginkit.Handle(mux, "slack/chat_post_message", func(ctx context.Context, p *slackapi.PostMessageParams) (any, error) {
		return s.slack.PostMessage(ctx, p)
	})
	pluginkit.Handle(mux, "slack/chat_post_ephemeral", func(ctx context.Context, p *slackapi.PostEphemeralParams) (any, error) {
		return s.slack.PostEphemeral(ctx, p)
	})
	pluginkit.Handle(mux, "slack/send_dm", func(ctx context.Context, p *slackapi.SendDMParams) (any, error) {
		return s.slack.SendDM(ctx, p)
	})
}

// Init learns the project root and builds the Slack client. It opens
// nothing: health probes spawn, handshake and leave within 3 s.
func (s *Service) Init(ctx context.Context, peer *pluginkit.Peer, params pluginkit.InitializeParams) error {
	s.log = peer.Logger()
	s.notify = peer.Notify
	s.projectRoot = params.ProjectRoot()
	s.slack = slackapi.New(slackapi.Options{
		BotToken: s.cfg.BotToken,
		AppToken: s.cfg.AppToken,
		APIURL:   s.cfg.SlackAPIURL(),
		Logger:   s.log,
	})
	return nil
}

// Close closes the seen-set once the streams have stopped.
func (s *Service) Close(ctx context.Context) error {
	if st := s.store.Swap(nil); st != nil {
		return st.Close()
	}
	return nil
}

// Health reports the stream's state: before a watch, whether the
// configuration would let one start; during one, the transport's phase
// (connecting or reconnecting is degraded, a rejected token unhealthy).
func (s *Service) Health(ctx context.Context) pluginkit.HealthReport {
	if !s.watching.Load() {
		if err := s.cfg.WatchCheck(); err != nil {
			return pluginkit.HealthReport{Status: pluginkit.Unhealthy, LastError: err.Error()}
		}
		if _, _, err := s.cfg.TriggerIDs(""); err != nil {
			return pluginkit.HealthReport{Status: pluginkit.Unhealthy, LastError: err.Error()}
		}
		return pluginkit.HealthReport{Status: pluginkit.Healthy}
	}
	snap := s.status.Get()
	transport := "socket mode"
	if s.cfg.Mode == config.ModeHTTP {
		transport = "events api"
	}
	switch snap.Phase {
	case inbound.PhaseAuthFailed, inbound.PhaseFailed:
		return pluginkit.HealthReport{Status: pluginkit.Unhealthy, LastError: orDefault(snap.LastError, snap.Phase.String())}
	case inbound.PhaseConnected, inbound.PhaseListening:
		if e := s.storeErr.Load(); e != nil {
			return pluginkit.HealthReport{Status: pluginkit.Degraded, LastError: *e}
		}
		return pluginkit.HealthReport{Status: pluginkit.Healthy}
	default: // idle (not started yet), connecting, reconnecting, stopped
		return pluginkit.HealthReport{Status: pluginkit.Degraded, LastError: orDefault(snap.LastError, transport+" "+snap.Phase.String())}
	}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// Stats returns the emitter's counters.
func (s *Service) Stats() *Stats { return &s.stats }
