package logstore

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/logql"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/loki"
)

// Tunables that are not configuration.
const (
	// storeBudget bounds one store call, retries included: the daemon
	// waits 5 s and conformance 3 s.
	storeBudget = 2800 * time.Millisecond
	// maxLine keeps lines under Loki's default max_line_size (256 KB),
	// with room for a proxy's framing.
	maxLine = 250_000
	// maxLimit is Loki's default max_entries_limit_per_query.
	maxLimit = 5000
	// defaultLimit applies when a query has no limit (the reference's).
	defaultLimit = 500
	// failureMemory is how long a failed push keeps health degraded.
	failureMemory = time.Minute
	// healthBudget bounds the upstream check (the daemon allows 2 s).
	healthBudget = 1200 * time.Millisecond
)

// Service is the running plugin.
type Service struct {
	cfg    config.Config
	client *loki.Client
	// unavailable says why store/query/tail cannot run ("" when they can).
	unavailable string
	opts        logql.Options
	parser      atomic.Bool // filter with | json, no structured metadata
	buf         *buffer
	log         *slog.Logger

	mu          sync.Mutex
	lastFailure time.Time
	failureMsg  string
}

// New builds the service. Nothing is contacted until a call needs Loki.
func New(cfg config.Config) *Service {
	s := &Service{cfg: cfg, buf: newBuffer(10_000, 32<<20, 10*time.Minute), log: slog.New(slog.DiscardHandler)}
	s.opts = logql.Options{ServiceName: cfg.ServiceName}
	for _, l := range cfg.ExtraLabels {
		s.opts.ExtraLabels = append(s.opts.ExtraLabels, logql.Label{Name: l.Name, Value: l.Value})
	}
	s.parser.Store(cfg.StructuredMetadata == config.SMOff)
	if cfg.URL == nil {
		s.unavailable = cfg.Missing
		return s
	}
	c, err := loki.New(loki.Options{
		BaseURL: cfg.URL, TenantID: cfg.TenantID, Username: cfg.Username, Password: cfg.Password,
		BearerToken: cfg.BearerToken, Timeout: cfg.Timeout, CAFile: cfg.CAFile,
		InsecureSkipVerify: cfg.InsecureSkipVerify, Encoding: cfg.PushEncoding,
		UserAgent: "animus-logs-loki/" + pluginkit.BuildVersion(),
	})
	if err != nil {
		s.unavailable = config.EnvCAFile + " unusable: " + err.Error()
		return s
	}
	s.client = c
	return s
}

// Register adds the log-storage methods. Registration order is the order
// of capabilities.methods; query and tail are advertised because the
// schema says supports_query and supports_tail.
func (s *Service) Register(mux *pluginkit.Mux) {
	pluginkit.Handle(mux, "log_storage/store", s.store)
	pluginkit.Handle(mux, "log_storage/query", s.query)
	pluginkit.Handle(mux, "log_storage/tail", s.tail)
	pluginkit.Handle(mux, "log_storage/schema", s.schema)
}

// Init keeps the host's logger.
func (s *Service) Init(_ context.Context, peer *pluginkit.Peer, _ pluginkit.InitializeParams) error {
	s.log = peer.Logger()
	if s.unavailable != "" {
		s.log.Warn("Loki is not configured; store, query and tail will fail", "reason", s.unavailable)
	}
	return nil
}

// ready returns the client, or the -32603 unavailable error that names
// what is missing.
func (s *Service) ready() (*loki.Client, error) {
	if s.client == nil {
		return nil, pluginkit.Unavailable("%s: set %s to Loki's base URL, e.g. http://loki:3100", s.unavailable, config.EnvURL)
	}
	return s.client, nil
}

// Schema is LogStorageSchema.
type Schema struct {
	SupportsQuery     bool      `json:"supports_query"`
	SupportsTail      bool      `json:"supports_tail"`
	SupportsDedup     bool      `json:"supports_dedup"`
	SupportsFiltering Filtering `json:"supports_filtering"`
	MaxQueryWindow    *int64    `json:"max_query_window,omitempty"`
	RetentionHint     *int64    `json:"retention_hint,omitempty"`
}

// Filtering is SupportsFiltering.
type Filtering struct {
	ByLevel     bool `json:"by_level"`
	BySource    bool `json:"by_source"`
	ByTarget    bool `json:"by_target"`
	ByTimeRange bool `json:"by_time_range"`
	ByGlob      bool `json:"by_glob"`
}

// schema tells the truth: every filter is evaluated by Loki, results are
// deduplicated by id, the window is LOKI_MAX_QUERY_WINDOW, and retention
// is advertised only when configured.
func (s *Service) schema(context.Context, struct{}) (Schema, error) {
	window := s.cfg.MaxQueryWindow.Milliseconds()
	sc := Schema{
		SupportsQuery: true, SupportsTail: true, SupportsDedup: true,
		SupportsFiltering: Filtering{true, true, true, true, true},
		MaxQueryWindow:    &window,
	}
	if s.cfg.RetentionHint > 0 {
		r := s.cfg.RetentionHint.Milliseconds()
		sc.RetentionHint = &r
	}
	return sc, nil
}

// pushFailed and pushSucceeded feed health: a recent failed push makes the
// plugin degraded until a push succeeds or a minute passes.
func (s *Service) pushFailed(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastFailure, s.failureMsg = time.Now(), msg
}

func (s *Service) pushSucceeded() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastFailure, s.failureMsg = time.Time{}, ""
}

func (s *Service) recentFailure() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.lastFailure.IsZero() && time.Since(s.lastFailure) < failureMemory {
		return s.failureMsg
	}
	return ""
}
