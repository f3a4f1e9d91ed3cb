package api

import (
	"net/http"
)

// route is one row of the HTTP surface. The row both registers the handler
// and documents it in openapi.json (openapi.go), so what is described is
// what is served.
type route struct {
	method  string
	path    string // chi pattern; {name} segments are path parameters
	rpc     string // control method it reaches, "" for local routes
	summary string
	params  []param // query and header parameters; path parameters come from path
	body    bodyKind
	in      string // component schema of the request body (body != noBody)
	out     string // component schema of the 200 data; "" when there is no JSON 200
	bare    bool   // the 200 body is out itself, not wrapped in the envelope
	// sse is set when the route can answer text/event-stream: its events,
	// item schema and whether it resumes from Last-Event-ID.
	sse    streamSpec
	public bool // no bearer token needed
	// statuses are the error statuses the handler itself writes, for the
	// routes whose failures are not those of a control call (see
	// errorStatuses); nil means "those of a control call" when rpc is set.
	statuses []int
	handler  http.HandlerFunc
}

// streams reports whether the route can answer with Server-Sent Events.
func (rt route) streams() bool { return rt.sse.event != "" }

type bodyKind int

const (
	noBody bodyKind = iota
	optionalBody
	requiredBody
)

// builder turns a request into control params, or a 400.
type builder func(r *http.Request) (any, error)

// unary is the common route shape: validate and build params, then make
// one control call. Nothing is dialled when build fails.
func (s *Server) unary(method string, build builder) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var p any
		if build != nil {
			var err error
			if p, err = build(r); err != nil {
				writeErr(w, asAPIError(err))
				return
			}
		}
		s.call(w, r, method, p)
	}
}

func asAPIError(err error) *apiError {
	if e, ok := err.(*apiError); ok {
		return e
	}
	return badInput("%s", err.Error())
}

// table is every route, in the order openapi.json lists them.
func (s *Server) table() []route {
	var t []route
	t = append(t, s.metaRoutes()...)
	t = append(t, s.daemonRoutes()...)
	t = append(t, s.workflowRoutes()...)
	t = append(t, s.queueRoutes()...)
	t = append(t, s.pluginRoutes()...)
	t = append(t, s.subjectRoutes()...)
	t = append(t, s.agentRoutes()...)
	return t
}

func (s *Server) metaRoutes() []route {
	return []route{
		{method: http.MethodGet, path: "/healthz", summary: "Liveness: the listener answers (no auth, no daemon call)",
			out: "Health", public: true, handler: s.healthz},
		// readyz turns every daemon answer, errors included, into "ready";
		// only a daemon it cannot talk to fails it.
		{method: http.MethodGet, path: "/readyz", rpc: "daemon/status", summary: "Readiness: the daemon answers on its control socket (no auth)",
			out: "Ready", public: true, handler: s.readyz,
			statuses: []int{http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout}},
		{method: http.MethodGet, path: "/api/v1/openapi.json", summary: "This OpenAPI 3.1 description of every route (the bare document, no envelope)",
			out: "OpenAPIDocument", bare: true, handler: s.openapi},
		{method: http.MethodGet, path: "/api/v1/transport", summary: "The transport's bound address, start time and project root",
			out: "TransportDetails", handler: s.info},
	}
}
