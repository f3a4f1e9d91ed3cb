package backend

import (
	"context"
	"errors"
	"log/slog"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/subject-sqlite/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/subject-sqlite/internal/store"
	"github.com/animus-plugins/animus-plugins/plugins/subject-sqlite/internal/watch"
)

// App is the running plugin: configuration, the store (opened on
// initialize) and the watch hub.
type App struct {
	cfg   config.Config
	store *store.Store
	hub   *watch.Hub
	log   *slog.Logger
}

// New returns an App for cfg. Nothing is opened until Init.
func New(cfg config.Config) *App {
	return &App{cfg: cfg, log: slog.New(slog.DiscardHandler)}
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

// Init opens (and migrates) the database and starts the watch poller. A
// relative database path is taken from the project root the host sent, or
// from the working directory, which the daemon sets to the project root.
func (a *App) Init(ctx context.Context, peer *pluginkit.Peer, params pluginkit.InitializeParams) error {
	a.log = peer.Logger()
	path := pluginkit.ProjectPath(params.ProjectRoot(), a.cfg.DBPath, config.DefaultDBPath)
	var hub *watch.Hub
	st, err := store.Open(ctx, store.Options{
		Path: path, BusyTimeout: a.cfg.BusyTimeout, AutoMigrate: a.cfg.AutoMigrate, Hints: a.cfg.Hints,
		OnCommit: func() { hub.Nudge() },
	})
	if err != nil {
		if errors.Is(err, store.ErrSchemaBehind) {
			return pluginkit.Unavailable("%s", err.Error()).Wrap(err)
		}
		a.log.Error("cannot open the subject database", "path", path, "error", err)
		return pluginkit.Unavailable("cannot open the subject database; check %s (the cause is in the plugin's log)", config.EnvDBPath).Wrap(err)
	}
	hub = watch.New(st, a.cfg.Hints, a.cfg.WatchPoll, a.log)
	a.store, a.hub = st, hub
	peer.Go(func(ctx context.Context) { hub.Run(ctx, peer.Notify) })
	return nil
}

// Health pings the database.
func (a *App) Health(ctx context.Context) pluginkit.HealthReport {
	if a.store == nil {
		return pluginkit.HealthReport{Status: pluginkit.Degraded, LastError: "not initialized: the database opens on initialize"}
	}
	if err := a.store.Ping(ctx); err != nil {
		a.log.Warn("health: database ping failed", "error", err)
		return pluginkit.HealthReport{Status: pluginkit.Unhealthy, LastError: "database ping failed: " + err.Error()}
	}
	return pluginkit.HealthReport{Status: pluginkit.Healthy}
}

// Close closes the database once the plugin has drained.
func (a *App) Close(context.Context) error {
	if a.store == nil {
		return nil
	}
	return a.store.Close()
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
