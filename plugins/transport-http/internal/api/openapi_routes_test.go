package api

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
)

// The router and the document agree: every chi route is a described
// operation or one of the 405 guards that keep static segments static
// (and those are not described), every described operation is routed, and
// every route has an exemplar, so the response matrix below reaches it.
func TestOpenAPIRouterParity(t *testing.T) {
	s := newTestServer(t, Options{})
	sp := loadSpec(t, s)
	described := map[string]bool{}
	for p, item := range sp.tree["paths"].(map[string]any) {
		for m := range item.(map[string]any) {
			described[strings.ToUpper(m)+" "+p] = true
		}
	}
	walked := map[string]bool{}
	concrete := strings.NewReplacer("{id}", "x", "{name}", "x", "{plugin}", "x")
	err := chi.Walk(s.router.(chi.Routes), func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		key := method + " " + pattern
		walked[key] = true
		if s.served(method, pattern) {
			if !described[key] {
				t.Errorf("%s is served but not described", key)
			}
			return nil
		}
		if described[key] {
			t.Errorf("%s is a 405 guard but described as an operation", key)
		}
		w := serve(s, method, concrete.Replace(pattern), "", nil)
		if w.Code != http.StatusMethodNotAllowed || len(w.Header().Values("Allow")) == 0 {
			t.Errorf("%s is registered, not in the table, and answers %d (Allow %v)", key, w.Code, w.Header().Values("Allow"))
		}
		if err := sp.checkSchema("ErrorEnvelope", w.Body.Bytes()); err != nil {
			t.Errorf("%s: %v", key, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key := range described {
		if !walked[key] {
			t.Errorf("%s is described but not routed", key)
		}
	}
	has := map[string]bool{}
	for _, e := range exemplars() {
		has[e.route] = true
	}
	for _, rt := range s.routes {
		if !has[rt.method+" "+rt.path] {
			t.Errorf("%s %s has no exemplar: the response matrix does not reach it", rt.method, rt.path)
		}
	}
}

// outcome is one way a request can go: a daemon behaviour, a server
// setting, or a kind of request. want is the status each exemplar must
// get; normal is the status it gets from a healthy daemon.
type outcome struct {
	name     string
	daemon   *reply // every method answers this; nil: no daemon listening
	opts     func(o *Options)
	setup    func(h *harness)
	alter    func(e exemplar, rq *request)
	want     func(rt route, e exemplar) int
	validReq bool // the request itself must also validate against the document
}

// daemonFails is want for outcomes where every control call fails with
// status: local routes are unaffected, readyz only fails when the daemon
// cannot be talked to (transport), and a daemon error means "ready".
func daemonFails(status int, transport bool) func(route, exemplar) int {
	return func(rt route, e exemplar) int {
		switch {
		case rt.rpc == "":
			return e.status()
		case rt.path == "/readyz" && !transport:
			return http.StatusOK
		}
		return status
	}
}

func outcomes() []outcome {
	normal := func(_ route, e exemplar) int { return e.status() }
	all := func(status int) func(route, exemplar) int { return func(route, exemplar) int { return status } }
	out := []outcome{
		{name: "ok", daemon: &reply{closed: "done"}, want: normal, validReq: true},
		{name: "unreachable", want: daemonFails(http.StatusServiceUnavailable, true)},
		{name: "connection dropped", daemon: &reply{drop: true}, want: daemonFails(http.StatusBadGateway, true)},
		{name: "reply not JSON", daemon: &reply{garbage: true}, want: daemonFails(http.StatusBadGateway, true)},
		{name: "daemon silent", daemon: &reply{stall: true}, opts: func(o *Options) { o.ControlTimeout = 60 * time.Millisecond },
			want: daemonFails(http.StatusGatewayTimeout, true)},
		{name: "shutting down", daemon: &reply{closed: "done"}, setup: func(h *harness) { h.s.Stop() },
			want: func(rt route, e exemplar) int {
				if e.stream {
					return http.StatusServiceUnavailable
				}
				return e.status()
			}},
		{name: "no token", daemon: &reply{closed: "done"}, alter: func(_ exemplar, rq *request) { rq.noAuth = true },
			want: func(rt route, e exemplar) int {
				if rt.public {
					return e.status()
				}
				return http.StatusUnauthorized
			}},
		{name: "origin refused", daemon: &reply{}, want: all(http.StatusForbidden),
			alter: func(_ exemplar, rq *request) { rq.header = map[string]string{"Origin": "https://evil.example"} }},
		{name: "host refused", daemon: &reply{}, opts: func(o *Options) { o.HostGuard = true }, want: all(http.StatusForbidden),
			alter: func(_ exemplar, rq *request) { rq.header = map[string]string{"Host": "evil.example"} }},
		{name: "body too large", daemon: &reply{}, opts: func(o *Options) { o.MaxBodyBytes = 16 }, want: all(http.StatusRequestEntityTooLarge),
			alter: func(_ exemplar, rq *request) { rq.body = `{"padding":"` + strings.Repeat("x", 32) + `"}` }},
		{name: "body not JSON", daemon: &reply{closed: "done"},
			alter: func(e exemplar, rq *request) {
				if rq.body == "" {
					rq.body = `{"kind":"task"}`
				}
				rq.header = map[string]string{"Content-Type": "text/plain"}
			},
			want: func(rt route, e exemplar) int {
				if rt.body != noBody {
					return http.StatusUnsupportedMediaType
				}
				return e.status()
			}},
	}
	for _, f := range []struct {
		fault
		status int
	}{
		{fault{-32602, "invalid request: bad", "invalid_request"}, http.StatusBadRequest},
		{fault{-32602, "invalid params: missing field `id`", ""}, http.StatusBadRequest},
		{fault{-32602, "not found: x", "not_found"}, http.StatusNotFound},
		{fault{-32602, "permission denied: rbac", "permission_denied"}, http.StatusForbidden},
		{fault{-32600, "conflict: finished", "conflict"}, http.StatusConflict},
		{fault{-32001, "not supported: agent/run", "not_supported"}, http.StatusNotImplemented},
		{fault{-32601, "unknown control method", ""}, http.StatusNotImplemented},
		{fault{-32603, "unavailable: no broadcaster", "unavailable"}, http.StatusServiceUnavailable},
		{fault{-32603, "internal: boom", "internal"}, http.StatusInternalServerError},
		{fault{-32603, "novel: ?", "novel"}, http.StatusInternalServerError},
	} {
		out = append(out, outcome{
			name:   fmt.Sprintf("daemon error %d %s", f.code, f.category),
			daemon: &reply{fault: &f.fault},
			want:   daemonFails(f.status, false),
		})
	}
	return out
}

// Every response every route can give is described: each outcome is
// driven through a real server for every exemplar, and each response
// (status, content type, headers, body, and each SSE event's data) is
// validated against openapi.json by libopenapi-validator. Then, per
// operation, the statuses seen must be exactly the statuses described,
// except 500, which the local routes only give on a panic.
func TestOpenAPIDescribesEveryResponse(t *testing.T) {
	sp := loadSpec(t, newTestServer(t, Options{}))
	var mu sync.Mutex
	seen := map[string]map[int]bool{}
	for _, o := range outcomes() {
		t.Run(o.name, func(t *testing.T) {
			var d *fakeDaemon
			if o.daemon != nil {
				d = newFakeDaemon(t)
				d.setAll(*o.daemon)
			}
			opts := withAuth(nil)
			if o.opts != nil {
				o.opts(&opts)
			}
			h := newHarness(t, opts, d)
			if o.setup != nil {
				o.setup(h)
			}
			for _, e := range exemplars() {
				t.Run(e.target, func(t *testing.T) {
					t.Parallel()
					rt := routeOf(t, h.s, e)
					rq := e.request()
					if o.alter != nil {
						o.alter(e, &rq)
					}
					x := h.on(t).do(rq)
					if want := o.want(rt, e); x.status != want {
						t.Errorf("status %d, want %d: %s", x.status, want, x.body)
					}
					if err := sp.checkResponse(x); err != nil {
						t.Error(err)
					}
					if strings.HasPrefix(x.header.Get("Content-Type"), "text/event-stream") {
						method, pattern, _ := strings.Cut(e.route, " ")
						if err := sp.checkStream(pattern, method, x.body); err != nil {
							t.Errorf("stream: %v", err)
						}
					}
					if o.validReq {
						if err := sp.checkRequest(x); err != nil {
							t.Errorf("the document rejects a request the route serves: %v", err)
						}
					}
					mu.Lock()
					defer mu.Unlock()
					if seen[e.route] == nil {
						seen[e.route] = map[int]bool{}
					}
					seen[e.route][x.status] = true
				})
			}
		})
	}
	if t.Failed() {
		return
	}
	for route, got := range seen {
		method, pattern, _ := strings.Cut(route, " ")
		described := sp.statuses(pattern, method)
		var missing, extra []int
		for st := range described {
			if !got[st] && st != http.StatusInternalServerError {
				missing = append(missing, st)
			}
		}
		for st := range got {
			if !described[st] {
				extra = append(extra, st)
			}
		}
		sort.Ints(missing)
		sort.Ints(extra)
		if len(missing) > 0 || len(extra) > 0 {
			t.Errorf("%s: described but never answered %v; answered but not described %v", route, missing, extra)
		}
	}
}
