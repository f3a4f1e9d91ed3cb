package subjects

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/watch"
)

// Options configure an App.
type Options struct {
	Rules Rules
	// Open opens the store for the project root the host bound (empty
	// when it sent none; the daemon's working directory is the root
	// then). onCommit is to be called after each of this process's own
	// commits, so its watches see them at once. A *pluginkit.Error it
	// returns reaches the host as it is.
	Open func(ctx context.Context, projectRoot string, onCommit func()) (storage.Store, error)
	// Lazy defers the first Open from initialize to the first domain call
	// (or health/check), retrying it on each call until it succeeds: a
	// database server that is slow or gone must not stall the handshake.
	// Without it, a failed Open fails initialize.
	Lazy bool
}

// App is the running plugin: the rules, the store (once open) and the
// watch hub.
type App struct {
	cfg  Rules
	open func(ctx context.Context, projectRoot string, onCommit func()) (storage.Store, error)
	lazy bool

	mu      sync.Mutex
	log     *slog.Logger
	peer    *pluginkit.Peer
	root    string
	inited  bool
	store   storage.Store // nil until open
	openErr error         // the last failed open, for health/check
	hub     *watch.Hub
}

// New returns an App. Nothing is opened until Init (or, Lazy, the first
// call).
func New(o Options) *App {
	a := &App{cfg: o.Rules, open: o.Open, lazy: o.Lazy, log: slog.New(slog.DiscardHandler)}
	a.hub = watch.New(lazySource{a}, a.cfg.Hints, a.cfg.WatchPoll, a.log)
	return a
}

// Register adds every verb for each configured kind and for subject/. The
// registered table is what initialize and --manifest advertise.
func (a *App) Register(mux *pluginkit.Mux) {
	for _, k := range a.cfg.Kinds {
		scope{a, k}.register(mux, k+"/")
	}
	scope{a, ""}.register(mux, "subject/")
}

// Markers are the subject_kind:<kind> capability strings the daemon's
// router builds its kind table from (subject.md §0.4).
func (a *App) Markers() []string {
	out := make([]string, len(a.cfg.Kinds))
	for i, k := range a.cfg.Kinds {
		out[i] = "subject_kind:" + k
	}
	return out
}

// Init records the binding and starts the watch poller; unless Lazy it
// opens the store too, and a failure fails initialize.
func (a *App) Init(ctx context.Context, peer *pluginkit.Peer, params pluginkit.InitializeParams) error {
	a.mu.Lock()
	a.log, a.peer, a.root, a.inited = peer.Logger(), peer, params.ProjectRoot(), true
	hub := a.hub
	hub.SetLogger(a.log)
	a.mu.Unlock()
	if !a.lazy {
		if _, err := a.opened(ctx); err != nil {
			return err
		}
	}
	peer.Go(func(ctx context.Context) { hub.Run(ctx, peer.Notify) })
	return nil
}

// opened returns the open store, opening it first if need be.
func (a *App) opened(ctx context.Context) (storage.Store, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.store != nil {
		return a.store, nil
	}
	if !a.inited {
		return nil, pluginkit.Unavailable("not initialized: the database opens on initialize")
	}
	hub := a.hub
	st, err := a.open(ctx, a.root, hub.Nudge)
	if err != nil {
		a.openErr = err
		a.log.Error("cannot open the subject database", "error", err)
		var pe *pluginkit.Error
		if errors.As(err, &pe) {
			return nil, err
		}
		return nil, rpcError(err, "")
	}
	a.store, a.openErr = st, nil
	// Other processes' (and hosts') commits: the backend wakes the hub
	// when it can tell; the poll finds them anyway.
	a.peer.Go(func(ctx context.Context) { st.Follow(ctx, hub.Nudge) })
	return st, nil
}

// Health pings the database, opening it first when Lazy.
func (a *App) Health(ctx context.Context) pluginkit.HealthReport {
	a.mu.Lock()
	st, inited := a.store, a.inited
	a.mu.Unlock()
	if !inited {
		return pluginkit.HealthReport{Status: pluginkit.Degraded, LastError: "not initialized: the database opens on initialize"}
	}
	if st == nil {
		var err error
		if st, err = a.opened(ctx); err != nil {
			return pluginkit.HealthReport{Status: pluginkit.Unhealthy, LastError: "cannot open the database: " + healthCause(err)}
		}
	}
	if err := st.Ping(ctx); err != nil {
		a.log.Warn("health: database ping failed", "error", err)
		return pluginkit.HealthReport{Status: pluginkit.Unhealthy, LastError: "database ping failed: " + healthCause(err)}
	}
	return pluginkit.HealthReport{Status: pluginkit.Healthy}
}

// healthCause words a failure for health/check's last_error: a backend's
// own reason when it gave one.
func healthCause(err error) string {
	var ue *storage.UnavailableError
	if errors.As(err, &ue) {
		return ue.Reason
	}
	var pe *pluginkit.Error
	if errors.As(err, &pe) {
		return pe.Message
	}
	return err.Error()
}

// Close closes the database once the plugin has drained.
func (a *App) Close(context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.store == nil {
		return nil
	}
	err := a.store.Close()
	a.store = nil
	return err
}

// lazySource is the change log the hub reads, through the App, so a watch
// opens a lazy store like any other call.
type lazySource struct{ a *App }

func (s lazySource) LastEventSeq(ctx context.Context) (int64, error) {
	st, err := s.a.opened(ctx)
	if err != nil {
		return 0, err
	}
	return st.LastEventSeq(ctx)
}

func (s lazySource) EventsAfter(ctx context.Context, after int64, limit int) ([]storage.EventRow, error) {
	st, err := s.a.opened(ctx)
	if err != nil {
		return nil, err
	}
	return st.EventsAfter(ctx, after, limit)
}

// scope is one method prefix: a configured kind, or "" for subject/.
type scope struct {
	app  *App
	kind string
}

func (sc scope) register(mux *pluginkit.Mux, prefix string) {
	pluginkit.Handle(mux, prefix+"list", sc.list)
	pluginkit.Handle(mux, prefix+"get", sc.get)
	pluginkit.Handle(mux, prefix+"create", sc.create)
	pluginkit.Handle(mux, prefix+"update", sc.update)
	pluginkit.Handle(mux, prefix+"status", sc.status)
	pluginkit.Handle(mux, prefix+"next", sc.next)
	pluginkit.Handle(mux, prefix+"delete", sc.delete)
	pluginkit.Handle(mux, prefix+"schema", sc.schema)
	pluginkit.Handle(mux, prefix+"watch", sc.watch)
	pluginkit.Handle(mux, prefix+"unwatch", sc.unwatch)
	pluginkit.HandleNotification(mux, prefix+"unwatch", sc.unwatchNotification)
	pluginkit.Handle(mux, prefix+"comments", sc.comments)
}
