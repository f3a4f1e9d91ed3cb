package transport

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/transport-http/internal/api"
	"github.com/animus-plugins/animus-plugins/plugins/transport-http/internal/control"
)

// Kinds is TransportSchema.kinds: REST over HTTP, plus SSE streams.
var Kinds = []string{"http", "rest", "sse"}

// Env is the manifest's env_required.
var Env = []pluginkit.EnvVar{{
	Name:        TokenEnv,
	Description: "bearer token HTTP clients must send (at least 16 characters); without any token only loopback bind addresses are served",
	Sensitive:   true,
}}

// Service is the transport_backend: it owns at most one listener at a time.
type Service struct {
	getenv func(string) string
	log    *slog.Logger
	peer   *pluginkit.Peer // set by Init; nil when driven without a host

	mu      sync.Mutex
	run     *listener // nil when not serving
	stopped bool      // a listener existed and was shut down
}

// New returns a Service reading its tokens through getenv (os.Getenv).
func New(getenv func(string) string) *Service {
	return &Service{getenv: getenv, log: slog.New(slog.DiscardHandler)}
}

// Register adds the transport methods to mux.
func (s *Service) Register(mux *pluginkit.Mux) {
	pluginkit.Handle(mux, "transport/start", s.Start)
	pluginkit.Handle(mux, "transport/shutdown", s.Shutdown)
	pluginkit.Handle(mux, "transport/schema", s.Schema)
}

// Init takes the plugin's logger; nothing else happens before
// transport/start (the daemon's health probe never starts us).
func (s *Service) Init(_ context.Context, peer *pluginkit.Peer, _ pluginkit.InitializeParams) error {
	s.log = peer.Logger()
	s.peer = peer
	return nil
}

// Info is TransportInfo.
type Info struct {
	BoundAddr string `json:"bound_addr"`
	StartedAt string `json:"started_at"`
}

// Start binds the listener and serves. It never dials the control socket:
// the pool connects on the first HTTP request that needs the daemon.
func (s *Service) Start(ctx context.Context, p StartParams) (Info, error) {
	st, err := parseSettings(p, s.getenv)
	if err != nil {
		return Info{}, err
	}
	if peer := pluginkit.PeerFrom(ctx); peer != nil {
		for _, token := range st.secrets {
			peer.AddSecret(token)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.run != nil {
		return Info{}, pluginkit.InvalidParams("transport already started on %s: call transport/shutdown first", s.run.addr).
			WithData("bound_addr", s.run.addr)
	}
	ln, err := net.Listen("tcp", st.listenAddr)
	if err != nil {
		return Info{}, bindError(st.listenAddr, err)
	}
	l := newListener(ln, st, s.log, s.peer)
	s.run, s.stopped = l, false
	s.log.Info("transport started", "bound_addr", l.addr, "settings", st.describe())
	return Info{BoundAddr: l.addr, StartedAt: l.startedAt.UTC().Format(time.RFC3339Nano)}, nil
}

// bindError maps a listen failure to the transport categories (spec
// §13.4), all -32603 as in the reference transport.
func bindError(addr string, err error) error {
	reason := err.Error()
	var se *os.SyscallError
	if errors.As(err, &se) {
		reason = se.Err.Error()
	}
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return pluginkit.Errorf(pluginkit.CategoryAddressInUse, "address in use: %s", addr)
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return pluginkit.Errorf(pluginkit.CategoryPermissionDenied, "permission denied: cannot bind %s", addr).
			WithCode(pluginkit.CodeInternalError)
	}
	return pluginkit.Errorf(pluginkit.CategoryOther, "cannot bind %s: %s", addr, reason)
}

// ShutdownResult is transport/shutdown's reply: the reference's
// {"shutdown":true}, plus whether every request finished in time.
type ShutdownResult struct {
	Shutdown bool `json:"shutdown"`
	Drained  bool `json:"drained"`
}

// Shutdown drains: the listener closes at once (the address is free before
// this returns), SSE streams get `event: end`, in-flight requests get the
// drain deadline to finish, and only then are stragglers cut and the
// control connections closed. Calling it again, or before start, is a
// no-op.
func (s *Service) Shutdown(_ context.Context, _ struct{}) (ShutdownResult, error) {
	s.mu.Lock()
	l := s.run
	s.mu.Unlock()
	if l == nil {
		return ShutdownResult{Shutdown: true, Drained: true}, nil
	}
	drained := l.stop(l.drain)
	s.mu.Lock()
	if s.run == l {
		s.run, s.stopped = nil, true
	}
	s.mu.Unlock()
	s.log.Info("transport stopped", "bound_addr", l.addr, "drained", drained)
	return ShutdownResult{Shutdown: true, Drained: drained}, nil
}

// Schema is TransportSchema.
type Schema struct {
	Kinds             []string `json:"kinds"`
	SupportsStreaming bool     `json:"supports_streaming"`
	SupportsWebsocket bool     `json:"supports_websocket"`
	DefaultPort       int      `json:"default_port"`
}

// Schema answers before start, too.
func (s *Service) Schema(context.Context, struct{}) (Schema, error) {
	return Schema{Kinds: Kinds, SupportsStreaming: true, SupportsWebsocket: false, DefaultPort: DefaultPort}, nil
}

// Health is degraded before start (and after shutdown), healthy while the
// listener serves, unhealthy once it has died under us.
func (s *Service) Health(context.Context) pluginkit.HealthReport {
	s.mu.Lock()
	l, stopped := s.run, s.stopped
	s.mu.Unlock()
	switch {
	case l == nil && stopped:
		return pluginkit.HealthReport{Status: pluginkit.Degraded, LastError: "transport stopped: not serving"}
	case l == nil:
		return pluginkit.HealthReport{Status: pluginkit.Degraded}
	}
	if err := l.failure(); err != nil {
		return pluginkit.HealthReport{Status: pluginkit.Unhealthy, LastError: "listener failed: " + err.Error()}
	}
	return pluginkit.HealthReport{Status: pluginkit.Healthy}
}

// Close runs when the plugin drains (exit, stdin EOF, SIGTERM, shutdown):
// the listener is stopped with a short grace so the process can leave
// within the hosts' budgets.
func (s *Service) Close(ctx context.Context) error {
	s.mu.Lock()
	l := s.run
	s.run = nil
	s.mu.Unlock()
	if l == nil {
		return nil
	}
	grace := 300 * time.Millisecond
	if d, ok := ctx.Deadline(); ok {
		grace = min(grace, time.Until(d)/2)
	}
	l.stop(grace)
	return nil
}

// listener is one bound, serving http.Server and what it owns.
type listener struct {
	ln        net.Listener
	addr      string
	startedAt time.Time
	drain     time.Duration
	srv       *http.Server
	api       *api.Server
	pool      *control.Pool

	mu       sync.Mutex
	err      error                 // Serve's failure, if the listener died
	fresh    map[net.Conn]struct{} // connected, no request read yet
	stopOnce sync.Once
	drained  bool
	done     chan struct{}
	served   chan struct{} // closed once Serve has returned
}

func newListener(ln net.Listener, st *settings, log *slog.Logger, peer *pluginkit.Peer) *listener {
	l := &listener{
		ln:        ln,
		addr:      ln.Addr().String(),
		startedAt: time.Now(),
		drain:     st.drain,
		pool:      control.NewPool(st.socket, st.poolSize),
		fresh:     map[net.Conn]struct{}{},
		done:      make(chan struct{}),
		served:    make(chan struct{}),
	}
	opts := st.api
	opts.Pool = l.pool
	opts.Logger = log
	if peer != nil {
		opts.Busy = peer.Busy
	}
	opts.Info = api.Info{BoundAddr: l.addr, StartedAt: l.startedAt.UTC(), ProjectRoot: st.projectRoot, Kinds: Kinds, Auth: opts.Auth != nil}
	l.api = api.New(opts)
	l.srv = &http.Server{
		Handler:           l.api.Handler(),
		ReadHeaderTimeout: st.readHeaderTimeout,
		ReadTimeout:       st.readTimeout,
		WriteTimeout:      opts.WriteTimeout,
		IdleTimeout:       st.idleTimeout,
		MaxHeaderBytes:    st.maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		ConnState:         l.track,
	}
	go func() {
		defer close(l.served)
		err := l.srv.Serve(ln)
		if !errors.Is(err, http.ErrServerClosed) {
			l.mu.Lock()
			l.err = err
			l.mu.Unlock()
			log.Error("listener failed", "bound_addr", l.addr, "error", err)
		}
	}()
	return l
}

// track remembers connections that have not sent a request yet.
// http.Server.Shutdown waits up to 5 s for those (a browser's preconnect,
// a port scan), which would hold transport/shutdown for its whole drain
// deadline although they have nothing in flight.
func (l *listener) track(c net.Conn, st http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if st == http.StateNew {
		l.fresh[c] = struct{}{}
	} else {
		delete(l.fresh, c)
	}
}

func (l *listener) closeFresh() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.fresh {
		c.Close()
	}
}

func (l *listener) failure() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// stop runs once; concurrent callers wait for the first. It reports
// whether every request finished inside grace.
func (l *listener) stop(grace time.Duration) bool {
	l.stopOnce.Do(func() {
		defer close(l.done)
		l.api.Stop() // SSE streams send event: end and return
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		// Shutdown closes the listening socket first, then waits for
		// in-flight requests; past grace the rest are cut. Connections
		// that never sent a request are closed at once.
		shut := make(chan error, 1)
		go func() { shut <- l.srv.Shutdown(ctx) }()
		l.closeFresh()
		err := <-shut
		if err != nil {
			l.srv.Close()
		}
		// http.Server.Shutdown closes only the listeners Serve has
		// registered. A shutdown that arrives before the Serve goroutine
		// got that far would leave the socket open until that goroutine
		// runs, after the reply. So close it here too, and wait for Serve
		// to return: a Close that races another Close returns before the
		// descriptor is gone, and Serve's own deferred Close is the one
		// that may be in flight.
		_ = l.ln.Close()
		<-l.served
		l.pool.Close()
		l.drained = err == nil
	})
	<-l.done
	return l.drained
}
