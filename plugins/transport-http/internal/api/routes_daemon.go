package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

var logLevels = []string{"trace", "debug", "info", "warn", "error"}

// maxLogBatch bounds GET /daemon/logs without follow; the daemon itself
// sends at most 200 historical entries.
const maxLogBatch = 10000

var (
	daemonEventStream = streamSpec{rpc: "daemon/events", event: "daemon-event", item: "DaemonRunEvent",
		tsField: "occurred_at", idField: "id", resumable: true}
	daemonLogStream = streamSpec{rpc: "daemon/logs", event: "daemon-log", item: "LogEntry",
		tsField: "ts", idField: "id", resumable: true}
)

func (s *Server) daemonRoutes() []route {
	get := func(path, rpc, summary, out string) route {
		return route{method: http.MethodGet, path: path, rpc: rpc, summary: summary, out: out, handler: s.unary(rpc, nil)}
	}
	post := func(path, rpc, summary string) route {
		return route{method: http.MethodPost, path: path, rpc: rpc, summary: summary, out: "Empty", handler: s.unary(rpc, nil)}
	}
	return []route{
		get("/api/v1/daemon/status", "daemon/status", "Daemon status", "DaemonStatus"),
		get("/api/v1/daemon/health", "daemon/health", "Daemon health (the daemon probes every installed plugin: slow)", "DaemonHealth"),
		get("/api/v1/daemon/agents", "daemon/agents", "Running agents", "AgentList"),
		get("/api/v1/daemon/metrics", "daemon/metrics", "Daemon metrics (in-tree daemon extra)", "DaemonMetrics"),
		post("/api/v1/daemon/start", "daemon/start", "Start the daemon (a no-op on a running daemon)"),
		post("/api/v1/daemon/stop", "daemon/stop", "Stop the daemon (not supported over the control socket today: 501)"),
		post("/api/v1/daemon/restart", "daemon/restart", "Restart the daemon (not supported over the control socket today: 501)"),
		{
			method: http.MethodGet, path: "/api/v1/daemon/logs", rpc: "daemon/logs",
			summary: "Daemon log entries: a JSON array of the recent batch, or with follow=true an SSE stream (event daemon-log)",
			params: []param{
				qTime("since", "Only entries at or after this time"),
				qEnum("level", logLevels, "Minimum level"),
				qString("plugin", "Only entries of this plugin"),
				qUint("limit", maxLogBatch, "Most entries in the batch (default 200); ignored with follow=true"),
				qBool("follow", "true: an SSE stream of the batch, then live entries"),
			},
			out: "LogEntryList", sse: daemonLogStream,
			handler: s.daemonLogs,
		},
		{
			method: http.MethodDelete, path: "/api/v1/daemon/logs",
			summary:  "Clearing logs is not implemented (501), as in the reference transport",
			statuses: []int{http.StatusNotImplemented},
			handler: func(w http.ResponseWriter, _ *http.Request) {
				writeErr(w, newError(http.StatusNotImplemented, "not_supported", "not_implemented", "clearing daemon logs is not implemented"))
			},
		},
		{
			method: http.MethodGet, path: "/api/v1/daemon/events", rpc: "daemon/events", sse: daemonEventStream,
			summary: "SSE stream of daemon run events (event daemon-event); resumes from Last-Event-ID",
			params:  []param{qTime("since", "Replay events at or after this time first")},
			handler: func(w http.ResponseWriter, r *http.Request) {
				since, err := queryOf(r).timestamp("since")
				if err != nil {
					writeErr(w, asAPIError(err))
					return
				}
				s.serveStream(w, r, daemonEventStream, params{}.set("since", since))
			},
		},
	}
}

// daemonLogs serves both shapes of /daemon/logs. The daemon always answers
// daemon/logs with a stream, and without follow that stream just stops
// (no end marker), so the batch ends when no entry has come for LogsIdle.
func (s *Server) daemonLogs(w http.ResponseWriter, r *http.Request) {
	q := queryOf(r)
	since, err := q.timestamp("since")
	if err == nil {
		_, err = q.enum("level", logLevels)
	}
	var limit *uint64
	if err == nil {
		limit, err = q.uint("limit", maxLogBatch)
	}
	var follow *bool
	if err == nil {
		follow, err = q.boolean("follow")
	}
	if err != nil {
		writeErr(w, asAPIError(err))
		return
	}
	p := params{}.set("since", since).set("level", q.str("level")).set("plugin", q.str("plugin"))
	if follow != nil && *follow {
		p["follow"] = true
		s.serveStream(w, r, daemonLogStream, p)
		return
	}
	p["follow"] = false
	batch := uint64(200)
	if limit != nil {
		batch = *limit
	}
	entries, aerr := s.collect(r.Context(), "daemon/logs", p, int(batch))
	if aerr != nil {
		writeErr(w, aerr)
		return
	}
	writeData(w, entries)
}

// collect gathers a finite stream's items until limit, the stream's end, or
// LogsIdle without a new item.
func (s *Server) collect(ctx context.Context, method string, p params, limit int) ([]json.RawMessage, *apiError) {
	actx, cancel := context.WithTimeout(ctx, s.opts.ControlTimeout)
	sub, err := s.opts.Pool.Subscribe(actx, method, p)
	cancel()
	if err != nil {
		return nil, fromControl(method, err)
	}
	defer sub.Close()
	entries := []json.RawMessage{}
	idle := time.NewTimer(s.opts.LogsIdle)
	defer idle.Stop()
	for len(entries) < limit {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				return entries, nil
			}
			entries = append(entries, ev.Data)
			idle.Reset(s.opts.LogsIdle)
		case <-idle.C:
			return entries, nil
		case <-ctx.Done():
			return nil, fromControl(method, ctx.Err())
		}
	}
	return entries, nil
}
