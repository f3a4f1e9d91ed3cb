package fakeloki

import (
	"context"
	"crypto/subtle"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Options configure the fake. Zero values take Loki's defaults; a negative
// duration disables that check.
type Options struct {
	// Addr is the listen address (default "127.0.0.1:0", a free port).
	// The fakeloki command sets it so operators can point LOKI_URL at a
	// fixed port such as 127.0.0.1:3100.
	Addr string
	// RequireTenant answers 401 "no org id" when X-Scope-OrgID is missing
	// (Loki with auth_enabled: true). Otherwise the tenant is "fake".
	RequireTenant bool
	// BasicAuthUser/BasicAuthPassword, when set, are required on every
	// request (as a gateway in front of Loki would); BearerToken likewise.
	// If both are set, either is accepted.
	BasicAuthUser     string
	BasicAuthPassword string
	BearerToken       string

	MaxLabelNames       int // max_label_names_per_series, default 15
	MaxLabelNameLength  int // max_label_name_length, default 1024
	MaxLabelValueLength int // max_label_value_length, default 2048
	MaxLineSize         int // max_line_size in bytes, default 256 KiB

	// OrderedWrites rejects an entry older than the newest one of its
	// stream ("entry out of order"), as with unordered_writes: false.
	OrderedWrites bool
	// OutOfOrderWindow: with unordered writes, an entry older than the
	// stream's newest minus this is "too far behind" (default 1h =
	// max_chunk_age/2).
	OutOfOrderWindow time.Duration
	// RejectOldSamplesMaxAge (default 168h) and CreationGracePeriod
	// (default 10m) bound entry timestamps relative to Now.
	RejectOldSamplesMaxAge time.Duration
	CreationGracePeriod    time.Duration
	// DisableServiceNameDiscovery turns off Loki 3's service_name label
	// (taken from service/app/job/… or "unknown_service").
	DisableServiceNameDiscovery bool
	// DisallowStructuredMetadata rejects entries that carry structured
	// metadata, as with allow_structured_metadata: false (or a schema
	// older than v13).
	DisallowStructuredMetadata bool

	MaxEntriesLimitPerQuery int           // default 5000
	MaxQueryLength          time.Duration // max_query_length, default 721h

	// TLS serves HTTPS with a certificate made up for the server (Loki's
	// server.http_tls_config); Certificate returns it, for a client's CA
	// file.
	TLS bool

	// Now is the clock for limits and query defaults (default time.Now).
	Now func() time.Time
}

func (o *Options) defaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.MaxLabelNames, 15)
	def(&o.MaxLabelNameLength, 1024)
	def(&o.MaxLabelValueLength, 2048)
	def(&o.MaxLineSize, 256*1024)
	def(&o.MaxEntriesLimitPerQuery, 5000)
	dur := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	dur(&o.OutOfOrderWindow, time.Hour)
	dur(&o.RejectOldSamplesMaxAge, 168*time.Hour)
	dur(&o.CreationGracePeriod, 10*time.Minute)
	dur(&o.MaxQueryLength, 721*time.Hour)
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Server is a running fake Loki.
type Server struct {
	opts   Options
	hs     *httptest.Server
	store  *store
	ctx    context.Context
	cancel context.CancelFunc

	pushes   atomic.Int64
	requests atomic.Int64

	// tailDrops is how many more accepted entries open tails lose
	// (DropTailEntries).
	tailDrops atomic.Int64

	mu         sync.Mutex
	failN      int
	failStatus int
	latency    time.Duration
	lag        time.Duration
	tails      map[*context.CancelFunc]struct{} // open tails, for CloseTails
	faults     map[string][]*pathFault          // by URL path, applied in order
	holding    map[string]int                   // requests waiting in HoldNext, by URL path
	held       bool                             // HoldIngestion until CatchUp
	seen       map[string]*pathSeen             // by URL path
	pushSizes  []int                            // streams per decoded push
	tailStarts []time.Time                      // start of each tail served
}

// Start starts a fake Loki on Options.Addr (default a free port on
// 127.0.0.1).
func Start(o Options) (*Server, error) {
	o.defaults()
	s := &Server{opts: o, store: newStore()}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ready", s.handleReady)
	mux.HandleFunc("POST /loki/api/v1/push", s.handlePush)
	mux.HandleFunc("GET /loki/api/v1/query_range", s.handleQueryRange)
	mux.HandleFunc("POST /loki/api/v1/query_range", s.handleQueryRange)
	mux.HandleFunc("GET /loki/api/v1/labels", s.handleLabels)
	mux.HandleFunc("GET /loki/api/v1/tail", s.handleTail)
	addr := o.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		s.cancel()
		return nil, fmt.Errorf("fakeloki: listen: %w", err)
	}
	s.hs = httptest.NewUnstartedServer(s.middleware(mux))
	_ = s.hs.Listener.Close()
	s.hs.Listener = l
	if o.TLS {
		s.hs.StartTLS()
	} else {
		s.hs.Start()
	}
	return s, nil
}

// New starts a fake Loki closed at the end of the test.
func New(t testing.TB, o Options) *Server {
	t.Helper()
	s, err := Start(o)
	if err != nil {
		t.Fatalf("fakeloki: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// URL is the base URL, e.g. http://127.0.0.1:40123 (what LOKI_URL takes),
// https://… with Options.TLS.
func (s *Server) URL() string { return s.hs.URL }

// Certificate is the server's certificate with Options.TLS (nil without):
// PEM-encode it for a client's CA file.
func (s *Server) Certificate() *x509.Certificate { return s.hs.Certificate() }

// Close stops the server and ends open tails.
func (s *Server) Close() {
	s.cancel()
	s.hs.CloseClientConnections()
	s.hs.Close()
}

// FailNext makes the next n requests (any endpoint) answer status with a
// Loki-like body instead of being handled.
func (s *Server) FailNext(n, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failN, s.failStatus = n, status
}

// SetLatency delays every following request by d (0 turns it off).
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// SetIngestionLag hides entries pushed from now on from query_range for d
// after they were accepted (0 turns it off), as a real Loki's ingestion
// path may lag a push. Tails still see them as they arrive.
func (s *Server) SetIngestionLag(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lag = d
}

// Pushes counts push requests that reached the push handler (after auth
// and injected faults), whatever their outcome.
func (s *Server) Pushes() int { return int(s.pushes.Load()) }

// Requests counts all requests received, including failed ones.
func (s *Server) Requests() int { return int(s.requests.Load()) }

// Entries counts the entries stored for tenant (duplicates not counted).
// Without X-Scope-OrgID the tenant is "fake".
func (s *Server) Entries(tenantID string) int {
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	if t := s.store.tenants[tenantID]; t != nil {
		return t.count
	}
	return 0
}

type tenantKey struct{}

func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		s.record(r)
		s.mu.Lock()
		lat := s.latency
		s.mu.Unlock()
		if lat > 0 {
			select {
			case <-time.After(lat):
			case <-r.Context().Done():
				return
			}
		}
		if !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Basic realm="fakeloki"`)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		s.mu.Lock()
		fail := 0
		if s.failN > 0 {
			s.failN--
			fail = s.failStatus
		}
		s.mu.Unlock()
		if fail != 0 {
			writeFault(w, fail, "")
			return
		}
		if !s.applyPathFault(w, r) {
			return
		}
		tenantID := r.Header.Get("X-Scope-OrgID")
		if tenantID == "" && r.URL.Path != "/ready" {
			if s.opts.RequireTenant {
				http.Error(w, "no org id", http.StatusUnauthorized)
				return
			}
			tenantID = "fake"
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), tenantKey{}, tenantID)))
	})
}

func (s *Server) authorized(r *http.Request) bool {
	o := s.opts
	if o.BasicAuthUser == "" && o.BearerToken == "" {
		return true
	}
	eq := func(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
	if u, p, ok := r.BasicAuth(); ok && o.BasicAuthUser != "" {
		return eq(u, o.BasicAuthUser) && eq(p, o.BasicAuthPassword)
	}
	if o.BearerToken != "" {
		return eq(r.Header.Get("Authorization"), "Bearer "+o.BearerToken)
	}
	return false
}

// writeFault answers an injected failure: msg, or Loki-like text for
// status when msg is "". A 429 carries Retry-After, as Loki's does.
func writeFault(w http.ResponseWriter, status int, msg string) {
	if msg == "" {
		msg = http.StatusText(status)
		if status == http.StatusTooManyRequests {
			msg = RateLimitedMessage
		}
	}
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	http.Error(w, msg, status)
}

// RateLimitedMessage is Loki's 429 text for the ingestion rate limit, the
// body FailNext (and FailPath without a body) answers a 429 with.
const RateLimitedMessage = "Ingestion rate limit exceeded for user fake (limit: 4194304 bytes/sec) while attempting to ingest lines, reduce log volume or contact your Loki administrator to see if the limit can be increased"

func tenantOf(r *http.Request) string {
	t, _ := r.Context().Value(tenantKey{}).(string)
	return t
}

func (s *Server) handleReady(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprint(w, "ready")
}

// handleLabels lists the stream label names of the tenant. start/end/since
// are accepted but not applied.
func (s *Server) handleLabels(w http.ResponseWriter, r *http.Request) {
	set := map[string]bool{}
	for _, st := range s.store.snapshot(tenantOf(r)) {
		for n := range st.labels {
			set[n] = true
		}
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	writeJSON(w, map[string]any{"status": "success", "data": names})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_ = json.NewEncoder(w).Encode(v)
}
