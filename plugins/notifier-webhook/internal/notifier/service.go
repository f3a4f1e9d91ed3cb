package notifier

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/delivery"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/store"
)

// Budgets. The daemon gives notify and flush 15 s each; both stay well
// inside it, leaving room for the outbox writes around the sends.
const (
	DefaultSyncBudget  = 5 * time.Second
	DefaultFlushBudget = 10 * time.Second
	// breakerThreshold consecutive transient failures of a connector stop
	// notify's synchronous attempts to it (rows are only enqueued) until a
	// flush gets one through: a dead receiver must not cost every notify
	// its timeout.
	breakerThreshold = 3
	sentRetention    = 7 * 24 * time.Hour
	pruneEvery       = time.Hour
	pruneBatch       = 5000
)

// Options configure a Service. Zero values take the process's own.
type Options struct {
	Version string
	Getenv  func(string) string
	Home    string
	Now     func() time.Time
	Random  func() float64 // [0, 1), for jitter
	Alive   func(pid int) bool
	// SyncBudget and FlushBudget override the defaults (tests).
	SyncBudget  time.Duration
	FlushBudget time.Duration
	Logger      *slog.Logger
}

// Service is the notifier. Its outbox opens in Init.
type Service struct {
	loader      *config.Loader
	getenv      func(string) string
	sender      *delivery.Sender
	now         func() time.Time
	random      func() float64
	alive       func(int) bool
	syncBudget  time.Duration
	flushBudget time.Duration
	log         *slog.Logger
	// peer is the host connection from Init: the registry of the secrets
	// the notifier reads (see learnSecrets) and their scrubber. Nil until
	// then, and in tests that call Init directly.
	peer *pluginkit.Peer
	// learnt holds the variables whose values learnSecrets has registered:
	// the environment does not change under the process, so a flush
	// registers only a configuration's new names. learnMu is held while a
	// name is registered, so no send goes out before its secrets are known.
	learnMu sync.Mutex
	learnt  map[string]bool

	store       *store.Store
	bindingRoot string
	// later counts notify's outcome records still running (recordLater).
	later sync.WaitGroup

	mu           sync.Mutex
	sems         map[string]chan struct{} // per project+connector
	failing      map[string]int           // consecutive transient failures
	lastError    string
	deadBaseline int
	lastPrune    time.Time
}

// New builds a Service; nothing is opened until Init.
func New(o Options) *Service {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Home == "" && o.Getenv("HOME") != "" {
		o.Home = o.Getenv("HOME")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Random == nil {
		o.Random = rand.Float64
	}
	if o.Alive == nil {
		o.Alive = processAlive
	}
	if o.SyncBudget <= 0 {
		o.SyncBudget = DefaultSyncBudget
	}
	if o.FlushBudget <= 0 {
		o.FlushBudget = DefaultFlushBudget
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Version == "" {
		o.Version = pluginkit.BuildVersion()
	}
	return &Service{
		loader:      &config.Loader{Getenv: o.Getenv, Home: o.Home},
		getenv:      o.Getenv,
		sender:      delivery.NewSender(o.Version, o.Now),
		now:         o.Now,
		random:      o.Random,
		alive:       o.Alive,
		syncBudget:  o.SyncBudget,
		flushBudget: o.FlushBudget,
		log:         o.Logger,
		sems:        map[string]chan struct{}{},
		failing:     map[string]int{},
	}
}

// Register adds the plugin's methods to mux.
func (s *Service) Register(mux *pluginkit.Mux) {
	pluginkit.Handle(mux, "notifier/notify", s.Notify)
	pluginkit.Handle(mux, "notifier/flush", s.Flush)
	pluginkit.Handle(mux, "notifier/schema", s.Schema)
	pluginkit.Handle(mux, "notifier/dead_letters", s.DeadLetters)
	pluginkit.Handle(mux, "notifier/replay_dead_letters", s.ReplayDeadLetters)
}

// DBPath is where the outbox of projectRoot lives: ANIMUS_NOTIFIER_DB_PATH
// (a relative value taken from the project root) or
// <project>/.animus/notifier.sqlite.
func DBPath(getenv func(string) string, projectRoot string) string {
	return pluginkit.ProjectPath(projectRoot, getenv(config.EnvDBPath), DefaultDBFile)
}

// DefaultDBFile is where the outbox lives inside the project.
const DefaultDBFile = ".animus/notifier.sqlite"

// Init opens the outbox of the bound project (the working directory when
// the host sends no project_binding) and recovers claims a dead process
// left behind.
func (s *Service) Init(ctx context.Context, peer *pluginkit.Peer, params pluginkit.InitializeParams) error {
	if peer != nil {
		s.log, s.peer = peer.Logger(), peer
		s.learnMu.Lock()
		s.learnt = nil // a new connection knows none of them yet
		s.learnMu.Unlock()
	}
	// The quick-start variables are secrets whatever the configuration
	// says; pluginkit already knows their raw values (they are Sensitive),
	// not the forms a URL takes in an error.
	s.learnSecrets(config.EnvWebhookURL, config.EnvSecret)
	root := params.ProjectRoot()
	st, err := store.Open(ctx, store.Options{Path: DBPath(s.getenv, root), Now: s.now})
	if err != nil {
		return pluginkit.Unavailable("cannot open the notifier outbox database").Wrap(err)
	}
	n, err := st.RecoverStale(ctx, s.alive)
	if err != nil {
		st.Close()
		return pluginkit.Unavailable("cannot recover the notifier outbox").Wrap(err)
	}
	if n > 0 {
		s.log.Info("recovered deliveries left in flight by a previous process", "count", n)
	}
	dead, err := st.DeadCount(ctx)
	if err != nil {
		st.Close()
		return pluginkit.Unavailable("cannot read the notifier outbox").Wrap(err)
	}
	s.mu.Lock()
	s.store, s.bindingRoot, s.deadBaseline = st, root, dead
	s.mu.Unlock()
	return nil
}

// Close closes the outbox.
func (s *Service) Close(context.Context) error {
	s.mu.Lock()
	st := s.store
	s.store = nil
	s.mu.Unlock()
	if st == nil {
		return nil
	}
	s.later.Wait()
	return st.Close()
}

func (s *Service) outbox() (*store.Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.store == nil {
		return nil, pluginkit.Unavailable("the notifier outbox is not open")
	}
	return s.store, nil
}

// Health is degraded while a connector's latest attempts are failing or
// the dead letters have grown since start (or since the last replay).
func (s *Service) Health(ctx context.Context) pluginkit.HealthReport {
	st, err := s.outbox()
	if err != nil {
		return pluginkit.HealthReport{Status: pluginkit.Healthy}
	}
	dead, err := st.DeadCount(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		return pluginkit.HealthReport{Status: pluginkit.Degraded, LastError: "the outbox database is not answering"}
	}
	s.deadBaseline = min(s.deadBaseline, dead)
	failing := 0
	for _, n := range s.failing {
		if n > 0 {
			failing++
		}
	}
	if failing == 0 && dead <= s.deadBaseline {
		return pluginkit.HealthReport{Status: pluginkit.Healthy}
	}
	var parts []string
	if failing > 0 {
		parts = append(parts, fmt.Sprintf("%d connector(s) failing", failing))
	}
	if dead > s.deadBaseline {
		parts = append(parts, fmt.Sprintf("%d new dead letter(s)", dead-s.deadBaseline))
	}
	msg := strings.Join(parts, ", ")
	if s.lastError != "" {
		msg += "; last error: " + s.lastError
	}
	return pluginkit.HealthReport{Status: pluginkit.Degraded, LastError: msg}
}

func connectorKey(project, connector string) string { return project + "\x00" + connector }

// semaphore bounds concurrent sends to one connector of one project.
func (s *Service) semaphore(project string, conn *config.Connector) chan struct{} {
	key := connectorKey(project, conn.ID)
	s.mu.Lock()
	defer s.mu.Unlock()
	sem, ok := s.sems[key]
	if !ok || cap(sem) != conn.MaxConcurrency {
		// A changed limit takes effect for new sends; sends holding the
		// old channel finish against it.
		sem = make(chan struct{}, conn.MaxConcurrency)
		s.sems[key] = sem
	}
	return sem
}

func (s *Service) breakerOpen(project, connector string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failing[connectorKey(project, connector)] >= breakerThreshold
}

// noteOutcome keeps the per-connector failure streak and the last error.
func (s *Service) noteOutcome(project, connector string, o delivery.Outcome, errText string) {
	key := connectorKey(project, connector)
	s.mu.Lock()
	defer s.mu.Unlock()
	// Only a receiver that cannot be reached or keeps erroring counts as
	// failing; one that answered (even 4xx) is up, and a misconfigured
	// connector shows as dead letters instead.
	if o == delivery.Transient {
		s.failing[key]++
	} else {
		delete(s.failing, key)
	}
	if errText != "" {
		s.lastError = fmt.Sprintf("connector %s: %s", connector, errText)
	}
}

func (s *Service) noteError(msg string) {
	s.mu.Lock()
	s.lastError = msg
	s.mu.Unlock()
}
