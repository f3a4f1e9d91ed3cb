package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/animus-plugins/animus-plugins/plugins/transport-http/internal/control"
)

// Defaults for Options fields left zero.
const (
	DefaultMaxBodyBytes   = 1 << 20
	DefaultControlTimeout = 30 * time.Second
	DefaultKeepAlive      = 15 * time.Second
	DefaultLogsIdle       = 300 * time.Millisecond
	DefaultMaxStreams     = 64
	DefaultWriteTimeout   = 60 * time.Second
)

// Info is what GET /api/v1/transport reports about this listener.
type Info struct {
	BoundAddr   string    `json:"bound_addr"`
	StartedAt   time.Time `json:"started_at"`
	ProjectRoot string    `json:"project_root"`
	Kinds       []string  `json:"kinds"`
	Auth        bool      `json:"auth"`
}

// Options configure a Server. The transport package fills them from
// TransportConfig.config after validating it.
type Options struct {
	Pool *control.Pool
	// Auth is nil when no token is configured; the transport then only
	// binds loopback.
	Auth           *Authenticator
	AllowedOrigins []string
	// HostGuard enables the Host-header check (loopback binds, or any bind
	// with AllowedHosts).
	HostGuard    bool
	AllowedHosts []string
	MaxBodyBytes int64
	// ControlTimeout bounds each control call (and a stream's ack).
	ControlTimeout time.Duration
	// WriteTimeout bounds writing one response, or one SSE frame.
	WriteTimeout time.Duration
	KeepAlive    time.Duration // SSE keep-alive comment interval
	LogsIdle     time.Duration // end of a finite daemon/logs batch
	MaxStreams   int
	Info         Info
	Logger       *slog.Logger
	// Busy, when set, is called as each request starts and its result
	// when the request ends (an event stream: once it is open); the
	// result may be called more than once, only the first counts. The
	// plugin passes pluginkit.Peer.Busy, which runs the process on all
	// its Ps only while requests overlap.
	Busy func() (done func())
}

// Server is the HTTP surface. Its handler is served by the transport's
// http.Server; Stop tells open SSE streams to finish before that server
// drains.
type Server struct {
	opts     Options
	router   chi.Router
	routes   []route
	stopping chan struct{}
	stopOnce sync.Once
	streams  atomic.Int32
	// spec is openapi.json, rendered on first use.
	spec func() ([]byte, error)
}

// New builds the router.
func New(o Options) *Server {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.ControlTimeout <= 0 {
		o.ControlTimeout = DefaultControlTimeout
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.KeepAlive <= 0 {
		o.KeepAlive = DefaultKeepAlive
	}
	if o.LogsIdle <= 0 {
		o.LogsIdle = DefaultLogsIdle
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = DefaultMaxStreams
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: o, stopping: make(chan struct{})}
	s.routes = s.table()
	s.spec = sync.OnceValues(s.buildOpenAPI)

	r := chi.NewRouter()
	r.Use(s.countBusy, s.recoverer, s.guardHost, s.cors, s.authenticate, s.limitBody)
	for _, rt := range s.routes {
		r.Method(rt.method, rt.path, rt.handler)
	}
	s.shadowStatics(r)
	r.NotFound(func(w http.ResponseWriter, req *http.Request) {
		writeErr(w, newError(http.StatusNotFound, "not_found", "route_not_found", "no route for %s %s", req.Method, req.URL.Path))
	})
	r.MethodNotAllowed(s.methodNotAllowed)
	s.router = r
	return s
}

// Handler is the whole HTTP surface.
func (s *Server) Handler() http.Handler { return s.router }

// Stop makes every open SSE stream send `event: end` and return, so the
// http.Server's graceful shutdown is not held up by them. Idempotent.
func (s *Server) Stop() { s.stopOnce.Do(func() { close(s.stopping) }) }

// Streams is the number of SSE streams open now.
func (s *Server) Streams() int { return int(s.streams.Load()) }

var routeMethods = []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete}

// shadowStatics keeps static segments static: chi would route GET
// /workflows/run (only POST exists) to /workflows/{id} with id "run"; like
// the reference transport, it is a 405 instead.
func (s *Server) shadowStatics(r chi.Router) {
	for _, rt := range s.routes {
		for _, m := range routeMethods {
			rctx := chi.NewRouteContext()
			if r.Match(rctx, m, rt.path) && rctx.RoutePattern() != rt.path {
				r.Method(m, rt.path, http.HandlerFunc(s.methodNotAllowed))
			}
		}
	}
}

// served reports whether the table has method on pattern.
func (s *Server) served(method, pattern string) bool {
	for _, rt := range s.routes {
		if rt.method == method && rt.path == pattern {
			return true
		}
	}
	return false
}

func (s *Server) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, m := range routeMethods {
		rctx := chi.NewRouteContext()
		if s.router.Match(rctx, m, r.URL.Path) && s.served(m, rctx.RoutePattern()) {
			allowed = append(allowed, m)
		}
	}
	for _, m := range allowed {
		w.Header().Add("Allow", m)
	}
	writeErr(w, newError(http.StatusMethodNotAllowed, "invalid_request", "method_not_allowed",
		"%s is not allowed on %s", r.Method, r.URL.Path))
}

// countBusy reports each request to Options.Busy for as long as it runs.
// An event stream lasts as long as its client, and mostly waits: it is
// counted out once open (see notBusy), so a dashboard's open stream does
// not keep the process wide.
func (s *Server) countBusy(next http.Handler) http.Handler {
	if s.opts.Busy == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		done := s.opts.Busy() // net/http writes the response after ServeHTTP returns
		defer done()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), busyKey{}, done)))
	})
}

type busyKey struct{}

// notBusy counts the request out early (an event stream, once open).
func notBusy(ctx context.Context) {
	if done, ok := ctx.Value(busyKey{}).(func()); ok {
		done()
	}
}

func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.opts.Logger.Error("handler panic", "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
				writeErr(w, newError(http.StatusInternalServerError, "internal", "internal", "internal error"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// call runs one unary control call under the per-request timeout and
// writes the envelope.
func (s *Server) call(w http.ResponseWriter, r *http.Request, method string, p any) {
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.ControlTimeout)
	defer cancel()
	res, err := s.opts.Pool.Call(ctx, method, p)
	if err != nil {
		e := fromControl(method, err)
		// The daemon's own errors are the client's business; a broken or
		// silent connection is the operator's.
		if e.Code == "wire_error" || e.Code == "daemon_timeout" {
			s.opts.Logger.Warn("control call failed", "method", method, "code", e.Code, "error", err)
		}
		writeErr(w, e)
		return
	}
	writeOK(w, res)
}

// healthz is liveness: the listener answers. No daemon call, no auth.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeData(w, map[string]any{
		"status":     "ok",
		"started_at": s.opts.Info.StartedAt,
		"uptime_ms":  time.Since(s.opts.Info.StartedAt).Milliseconds(),
	})
}

// readyz is readiness: the daemon answers daemon/status on the pool.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), min(s.opts.ControlTimeout, 3*time.Second))
	defer cancel()
	if _, err := s.opts.Pool.Call(ctx, "daemon/status", nil); err != nil {
		var rpc *control.RPCError
		if !errors.As(err, &rpc) { // a daemon that answers with an error is still there
			writeErr(w, fromControl("daemon/status", err))
			return
		}
	}
	writeData(w, map[string]any{"status": "ready", "daemon": "reachable"})
}

func (s *Server) info(w http.ResponseWriter, _ *http.Request) {
	writeData(w, s.opts.Info)
}

// rawJSON is a small helper for handlers that build data by hand.
func rawJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
