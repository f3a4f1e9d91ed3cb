package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
)

// Actor is who a bearer token stands for; it is attached to workflow/run
// and workflow/execute so plugins can scope data (transport-http.md §1.4).
type Actor struct {
	UserID   string   `json:"user_id"`
	Claims   []string `json:"claims,omitempty"`
	TenantID string   `json:"tenant_id,omitempty"`
}

// Credential is one accepted bearer token and, optionally, its actor.
type Credential struct {
	Token string
	Actor *Actor
}

// Authenticator checks bearer tokens. It keeps only SHA-256 digests and
// compares every configured digest on every request, in constant time and
// without stopping at a match, so neither the token nor which token matched
// leaks through timing.
type Authenticator struct {
	creds []digest
}

type digest struct {
	sum   [32]byte
	actor *Actor
}

// NewAuthenticator returns nil for no credentials: the caller must then
// restrict itself to loopback (see transport config).
func NewAuthenticator(creds []Credential) *Authenticator {
	if len(creds) == 0 {
		return nil
	}
	a := &Authenticator{}
	for _, c := range creds {
		a.creds = append(a.creds, digest{sum: sha256.Sum256([]byte(c.Token)), actor: c.Actor})
	}
	return a
}

// check returns whether the Authorization header carries an accepted
// token, and its actor.
func (a *Authenticator) check(header string) (*Actor, bool) {
	scheme, token, found := strings.Cut(strings.TrimSpace(header), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return nil, false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	var match *digest
	for i := range a.creds {
		if subtle.ConstantTimeCompare(sum[:], a.creds[i].sum[:]) == 1 {
			match = &a.creds[i]
		}
	}
	if match == nil {
		return nil, false
	}
	return match.actor, true
}

type actorKey struct{}

func actorFrom(ctx context.Context) *Actor {
	a, _ := ctx.Value(actorKey{}).(*Actor)
	return a
}

// public paths answer without a token: liveness and readiness probes.
func public(path string) bool { return path == "/healthz" || path == "/readyz" }

// authenticate rejects /api requests without an accepted bearer token: 401
// with the envelope and nothing about why (missing and wrong look alike).
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.opts.Auth == nil || public(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		actor, ok := s.opts.Auth.check(r.Header.Get("Authorization"))
		if !ok {
			writeErr(w, newError(http.StatusUnauthorized, "unauthenticated", "unauthenticated",
				"a valid bearer token is required"))
			return
		}
		if actor != nil {
			r = r.WithContext(context.WithValue(r.Context(), actorKey{}, actor))
		}
		next.ServeHTTP(w, r)
	})
}

// guardHost is the DNS-rebinding defence: on a loopback bind (or whenever
// allowed_hosts is set) the Host header must name loopback or an allowed
// host, so a page on evil.example whose name resolves to 127.0.0.1 cannot
// reach the API.
func (s *Server) guardHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.opts.HostGuard && !s.hostAllowed(r.Host) {
			writeErr(w, newError(http.StatusForbidden, "permission_denied", "forbidden_host",
				"requests must be addressed to localhost or an allowed host"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) hostAllowed(host string) bool {
	if host == "" {
		return false
	}
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.ToLower(strings.TrimSuffix(strings.Trim(name, "[]"), "."))
	if name == "localhost" {
		return true
	}
	if ip := net.ParseIP(name); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, a := range s.opts.AllowedHosts {
		if strings.EqualFold(a, name) || strings.EqualFold(a, host) {
			return true
		}
	}
	return false
}

// corsMethods and corsHeaders are what an allowed origin may use.
const (
	corsMethods = "GET, POST, PATCH, DELETE, OPTIONS"
	corsHeaders = "Authorization, Content-Type, Last-Event-ID"
)

// cors answers preflights and stamps allowed origins, by exact match only
// (the reference's prefix match let http://localhost.evil.com in). A
// request whose Origin is not allowed is refused outright: a browser would
// hide the answer anyway, and refusing stops a cross-site form from making
// the daemon act (CSRF) on a loopback bind without a token.
func (s *Server) cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Add("Vary", "Origin")
		if !s.originAllowed(origin) {
			writeErr(w, newError(http.StatusForbidden, "permission_denied", "forbidden_origin",
				"origin is not in cors.allowed_origins"))
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", corsMethods)
			h.Set("Access-Control-Allow-Headers", corsHeaders)
			h.Set("Access-Control-Max-Age", "3600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) originAllowed(origin string) bool {
	for _, o := range s.opts.AllowedOrigins {
		if o == origin {
			return true
		}
	}
	return false
}

// limitBody caps request bodies. A declared length over the limit is
// refused before reading; a body that lies is cut off by MaxBytesReader and
// reported 413 where it is decoded.
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.opts.MaxBodyBytes {
			writeErr(w, tooLarge(s.opts.MaxBodyBytes))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

func tooLarge(limit int64) *apiError {
	return newError(http.StatusRequestEntityTooLarge, "invalid_request", "payload_too_large",
		"request body exceeds %d bytes", limit)
}
