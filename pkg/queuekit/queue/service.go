package queue

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/wire"
)

// Options configure a Service. Zero Now and NewID mean the real clock and
// random UUID v4s; tests pin them.
type Options struct {
	Rules Rules
	// Open opens the queue of a bound project root. It runs on the first
	// domain call, never in initialize (the daemon starts a process per
	// call, and a database that is slow or gone must not stall the
	// handshake). A *pluginkit.Error it returns reaches the host as it is;
	// a *storage.UnavailableError becomes -32205.
	Open  func(ctx context.Context, projectRoot string) (storage.Store, error)
	Now   func() time.Time
	NewID func() string
}

// Service serves one project's queue for the life of one plugin process.
type Service struct {
	rules  Rules
	openFn func(ctx context.Context, projectRoot string) (storage.Store, error)
	now    func() time.Time
	newID  func() string

	mu     sync.Mutex
	paging listPaging
	bound  bool
	root   string
	st     storage.Store
}

// New returns a Service that is not bound to a project yet.
func New(o Options) *Service {
	s := &Service{rules: o.Rules, openFn: o.Open, now: o.Now, newID: o.NewID}
	if s.now == nil {
		s.now = time.Now
	}
	if s.newID == nil {
		s.newID = newUUID
	}
	return s
}

// Register adds the queue methods to mux in the references' order, which is
// also the order of capabilities.methods. Each handler's params type reads
// its own JSON (the wire request types; pluginkit.NoParams for stats and
// next_deadline), so pluginkit answers missing or malformed params with
// the references' -32602 before a handler runs.
func (s *Service) Register(mux *pluginkit.Mux) {
	pluginkit.Handle(mux, "queue/enqueue", s.enqueue)
	pluginkit.Handle(mux, "queue/list", s.list)
	pluginkit.Handle(mux, "queue/lease", s.lease)
	pluginkit.Handle(mux, "queue/stats", s.stats)
	pluginkit.Handle(mux, "queue/next_deadline", s.nextDeadline)
	pluginkit.Handle(mux, "queue/hold", s.hold)
	pluginkit.Handle(mux, "queue/release", s.release)
	pluginkit.Handle(mux, "queue/release_pending", s.releasePending)
	pluginkit.Handle(mux, "queue/drop", s.drop)
	pluginkit.Handle(mux, "queue/reorder", s.reorder)
	pluginkit.Handle(mux, "queue/mark_assigned", s.markAssigned)
	pluginkit.Handle(mux, "queue/completion", s.completion)
	pluginkit.Handle(mux, "queue/v2/enqueue", s.enqueueV2)
	pluginkit.Handle(mux, "queue/v2/lease", s.leaseV2)
	pluginkit.Handle(mux, "queue/v2/lease/renew", s.renew)
	pluginkit.Handle(mux, "queue/v2/lease/recover", s.recoverLease)
	pluginkit.Handle(mux, "queue/v2/completion", s.completionV2)
	pluginkit.Handle(mux, "queue/v2/release_pending", s.releasePendingV2)
}

// KindCapabilities is initialize's kind_capabilities: queue crate 0.4.0
// with generation-fenced leases, the gate the 0.7 daemon checks
// (queue-v2.md §1.1). max_lease_batch is the v2 batch limit (5, as the
// reference); old-style queue/lease still accepts any max.
func KindCapabilities() map[string]pluginkit.KindCapability {
	return map[string]pluginkit.KindCapability{
		"queue": {CrateVersion: wire.CrateVersion, Extra: wire.Capabilities{
			GenerationFencedLeasesV1: true, MaxLeaseBatch: wire.MaxLeaseBatch, PriorityWeighted: false,
		}},
	}
}

// Init records init_extensions.project_binding. It never touches the disk:
// without a binding the process still initializes (the daemon's generic
// health handshake sends none) and every domain call answers -32207. A
// binding that is present but unusable fails initialize with -32207, as
// the reference does.
func (s *Service) Init(ctx context.Context, _ *pluginkit.Peer, params pluginkit.InitializeParams) error {
	s.mu.Lock()
	s.paging = pagingFor(params.ProtocolVersion, params.HostInfo.Version)
	s.mu.Unlock()
	b, err := params.Binding()
	var bad *pluginkit.BindingError
	switch {
	case errors.Is(err, pluginkit.ErrNoBinding):
		logger(ctx).Debug("initialized without a project binding; queue methods will answer -32207")
		return nil
	case errors.As(err, &bad):
		return errBinding("%s", bindingMessage[bad.Problem])
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bound, s.root = true, b.ProjectRoot
	return nil
}

// bindingMessage words each binding problem as the reference queue does.
var bindingMessage = map[pluginkit.BindingProblem]string{
	pluginkit.BindingNotObject:    "init_extensions.project_binding must be an object with a project_root",
	pluginkit.BindingRootMissing:  "init_extensions.project_binding.project_root must be a string",
	pluginkit.BindingRootRelative: "init_extensions.project_binding.project_root must be an absolute path",
}

// update runs fn in one write transaction on the bound project's store,
// opening it on first use.
func (s *Service) update(ctx context.Context, fn func(tx storage.Store) error) error {
	st, err := s.open(ctx)
	if err != nil {
		return err
	}
	return st.Update(ctx, fn)
}

// open returns the project's store, opening it on first use. A failed
// open is not kept: the next call tries again.
func (s *Service) open(ctx context.Context) (storage.Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.bound {
		return nil, errUnbound()
	}
	if s.st != nil {
		return s.st, nil
	}
	// Whatever the backend, the daemon binds the project it runs in: a
	// root that is not there is a host bug, not an empty queue.
	if fi, err := os.Stat(s.root); err != nil || !fi.IsDir() {
		return nil, errBinding("the bound project root does not exist or is not a directory")
	}
	st, err := s.openFn(ctx, s.root)
	if err != nil {
		var pe *pluginkit.Error
		if errors.As(err, &pe) {
			return nil, err
		}
		return nil, s.storageError(ctx, "open", err)
	}
	s.st = st
	return st, nil
}

// Health reports unhealthy when a bound project's database cannot be
// opened or does not answer. An unbound process has nothing to check.
func (s *Service) Health(ctx context.Context) pluginkit.HealthReport {
	s.mu.Lock()
	bound := s.bound
	s.mu.Unlock()
	if !bound {
		return pluginkit.HealthReport{Status: pluginkit.Healthy}
	}
	st, err := s.open(ctx)
	if err == nil {
		err = st.Ping(ctx)
	}
	if err != nil {
		var pe *pluginkit.Error
		msg := "queue database unavailable"
		if errors.As(err, &pe) {
			msg = pe.Message
		}
		return pluginkit.HealthReport{Status: pluginkit.Unhealthy, LastError: msg}
	}
	return pluginkit.HealthReport{Status: pluginkit.Healthy}
}

// Close closes the database when the plugin drains.
func (s *Service) Close(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st == nil {
		return nil
	}
	err := s.st.Close()
	s.st = nil
	return err
}

func logger(ctx context.Context) *slog.Logger {
	if p := pluginkit.PeerFrom(ctx); p != nil {
		return p.Logger()
	}
	return slog.New(slog.DiscardHandler)
}
