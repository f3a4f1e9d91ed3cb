package durable

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/steplog"
	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// Options configure a Service. Zero Now means the real clock.
type Options struct {
	Rules Rules
	// Open opens the step log of a bound project root (a SQLite file under
	// it). It runs at initialize and, until it succeeds, again on each
	// domain call. A *pluginkit.Error it returns reaches the host as it is.
	Open func(ctx context.Context, projectRoot string) (storage.Store, error)
	// Lazy defers the first Open from initialize to the first domain call
	// (or health/check): a database server that is slow or gone must not
	// stall the handshake. A local file opens at initialize.
	Lazy bool
	Now  func() time.Time
}

// Service is the plugin's state: the rules, the project binding made at
// initialize, and the step log once its store is open.
type Service struct {
	cfg    Rules
	openFn func(ctx context.Context, projectRoot string) (storage.Store, error)
	lazy   bool
	now    func() time.Time

	mu      sync.Mutex
	log     *slog.Logger
	bindErr *pluginkit.Error // why domain calls cannot run (nil once bound)
	badBind bool             // a binding was sent but is unusable
	root    string           // the bound project root
	st      *steplog.Log     // nil until opened
	openErr error            // the last failed open, for health/check
}

// New returns a Service that is not bound to a project yet.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{
		cfg: o.Rules, openFn: o.Open, lazy: o.Lazy, now: o.Now,
		log:     slog.New(slog.DiscardHandler),
		bindErr: unbound("initialize carried no init_extensions.project_binding"),
	}
}

// KindCapabilities is initialize's kind_capabilities.
func (s *Service) KindCapabilities() map[string]pluginkit.KindCapability {
	return map[string]pluginkit.KindCapability{"durable_store": {
		CrateVersion: CrateVersion,
		Extra: Capabilities{
			DefaultReservationTTLSecs: uint64(s.cfg.ReservationTTL / time.Second),
			MaxPayloadBytes:           uint64(s.cfg.MaxPayloadBytes),
			SupportsRecovery:          true,
		},
	}}
}

// Init binds the project. Without a binding (generic handshakes, the
// daemon's health probe) it touches nothing on disk and every domain call
// answers -32305. With one, it opens the store; if that fails the error is
// logged and each domain call retries the open, answering -32304 while the
// database stays unavailable.
func (s *Service) Init(ctx context.Context, peer *pluginkit.Peer, p pluginkit.InitializeParams) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if peer != nil {
		s.log = peer.Logger()
	}
	b, err := p.Binding()
	var bad *pluginkit.BindingError
	switch {
	case errors.Is(err, pluginkit.ErrNoBinding):
		s.log.Info("no project binding; durable methods will answer -32305")
		return nil
	case errors.As(err, &bad) && bad.Problem == pluginkit.BindingRootRelative:
		s.bindErr, s.badBind = unbound("project_binding.project_root must be an absolute path"), true
		return nil
	case err != nil:
		s.bindErr, s.badBind = unbound("init_extensions.project_binding.project_root is missing or not a string"), true
		return nil
	}
	root := b.ProjectRoot
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		s.bindErr, s.badBind = unbound("project_binding.project_root is not an existing directory"), true
		return nil
	}
	s.bindErr = nil
	s.root = root
	if s.lazy {
		return nil
	}
	if _, err := s.openLocked(ctx); err != nil {
		s.log.Warn("durable store unavailable at initialize; will retry on each call", "error", err)
	}
	return nil
}

// storeFor returns the open store, opening it if an earlier attempt failed.
func (s *Service) storeFor(ctx context.Context) (*steplog.Log, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bindErr != nil {
		return nil, s.bindErr
	}
	if s.st != nil {
		return s.st, nil
	}
	st, err := s.openLocked(ctx)
	if err != nil {
		s.log.Warn("durable store still unavailable", "error", err)
		var pe *pluginkit.Error
		if errors.As(err, &pe) {
			return nil, err
		}
		// retryable, as on every backend failure: a database that cannot be
		// reached yet (or is locked) may well open on the next call.
		var be *storage.BackendError
		return nil, pluginkit.Unavailable("cannot open the durable store database").
			WithCode(CodeBackendUnavailable).WithData("retryable", errors.As(err, &be) && be.Busy).Wrap(err)
	}
	return st, nil
}

func (s *Service) openLocked(ctx context.Context) (*steplog.Log, error) {
	st, err := s.openFn(ctx, s.root)
	if err != nil {
		s.openErr = err
		return nil, err
	}
	s.st, s.openErr = steplog.New(st, s.now), nil
	s.log.Debug("durable store open")
	return s.st, nil
}

// Health reports healthy when unbound (the plugin itself is fine; the
// daemon's probe never binds), and otherwise whether the database answers.
func (s *Service) Health(ctx context.Context) pluginkit.HealthReport {
	s.mu.Lock()
	st, bindErr, badBind, openErr, bound := s.st, s.bindErr, s.badBind, s.openErr, s.root != ""
	s.mu.Unlock()
	switch {
	case badBind:
		return pluginkit.HealthReport{Status: pluginkit.Degraded, LastError: bindErr.Message}
	case !bound:
		return pluginkit.HealthReport{Status: pluginkit.Healthy}
	case st == nil && s.lazy:
		// Not opened yet (or the last try failed): try now.
		if _, err := s.storeFor(ctx); err != nil {
			s.mu.Lock()
			openErr = s.openErr
			s.mu.Unlock()
			return pluginkit.HealthReport{Status: pluginkit.Unhealthy, LastError: "backend unavailable: cannot open the database: " + rootCause(openErr)}
		}
		return s.Health(ctx)
	case st == nil:
		return pluginkit.HealthReport{Status: pluginkit.Unhealthy, LastError: "backend unavailable: cannot open the database: " + rootCause(openErr)}
	}
	if err := st.Store().Ping(ctx); err != nil {
		return pluginkit.HealthReport{Status: pluginkit.Unhealthy, LastError: "backend unavailable: " + rootCause(err)}
	}
	return pluginkit.HealthReport{Status: pluginkit.Healthy}
}

func (s *Service) logger() *slog.Logger {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log
}

// Close closes the store when the plugin drains.
func (s *Service) Close(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st == nil {
		return nil
	}
	err := s.st.Store().Close()
	s.st = nil
	return err
}

func unbound(why string) *pluginkit.Error {
	return pluginkit.Errorf(pluginkit.CategoryInvalidRequest, "project binding required: %s", why).
		WithCode(CodeProjectBindingMismatch)
}

// rootCause is the innermost error's text; pluginkit strips paths from it
// before health/check shows it.
func rootCause(err error) string {
	if err == nil {
		return "unknown error"
	}
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return fmt.Sprint(err)
		}
		err = next
	}
}
