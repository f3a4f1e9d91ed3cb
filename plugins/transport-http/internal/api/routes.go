package api

import (
	"net/http"
)

// route is one row of the HTTP surface. The row both registers the handler
// and documents it in openapi.json.
type route struct {
	method  string
	path    string // chi pattern; {name} segments are path parameters
	rpc     string // control method it reaches, "" for local routes
	summary string
	query   []string // documented query parameters
	body    bodyKind
	stream  bool // answers text/event-stream
	public  bool // no bearer token needed
	handler http.HandlerFunc
}

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
		{method: http.MethodGet, path: "/healthz", summary: "Liveness: the listener answers (no auth, no daemon call)", public: true, handler: s.healthz},
		{method: http.MethodGet, path: "/readyz", rpc: "daemon/status", summary: "Readiness: the daemon answers on its control socket (no auth)", public: true, handler: s.readyz},
		{method: http.MethodGet, path: "/api/v1/openapi.json", summary: "This description of every route", handler: s.openapi},
		{method: http.MethodGet, path: "/api/v1/transport", summary: "The transport's bound address, start time and project root", handler: s.info},
	}
}
