package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/plugins/transport-http/internal/control"
)

// streamSpec describes one control stream as SSE.
type streamSpec struct {
	rpc   string // control method that opens the stream
	event string // SSE event name of its items
	item  string // component schema of an item in openapi.json
	// tsField and idField name the item's timestamp and id. When both are
	// present an event's SSE id is "<ts>|<id>", and resumable streams
	// (whose request takes since) resume from Last-Event-ID.
	tsField   string
	idField   string
	resumable bool
}

// serveStream relays a control stream as Server-Sent Events:
//
//   - the subscription is opened (and any daemon error returned as the
//     envelope, with its status) before a single SSE byte is written;
//   - each item becomes `id: …`, `event: <name>`, `data: <item JSON>`;
//   - a `: keep-alive` comment goes out every KeepAlive;
//   - subscription/closed, or the transport shutting down, becomes
//     `event: end`; a daemon connection that dies becomes `event: error`
//     (the client may reconnect; a stream that ended should not);
//   - when the client goes away, the stream is cancelled with
//     $/cancelRequest and its socket closed.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, spec streamSpec, p params) {
	notBusy(r.Context())
	if n := s.streams.Add(1); int(n) > s.opts.MaxStreams {
		s.streams.Add(-1)
		writeErr(w, newError(http.StatusServiceUnavailable, "unavailable", "too_many_streams",
			"too many open event streams (%d)", s.opts.MaxStreams))
		return
	}
	defer s.streams.Add(-1)
	select {
	case <-s.stopping:
		writeErr(w, newError(http.StatusServiceUnavailable, "unavailable", "shutting_down", "the transport is shutting down"))
		return
	default:
	}

	resume := parseResume(r, spec)
	if resume != nil && spec.resumable {
		p["since"] = resume.ts.Format(time.RFC3339Nano)
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.ControlTimeout)
	sub, err := s.opts.Pool.Subscribe(ctx, spec.rpc, p)
	cancel()
	if err != nil {
		writeErr(w, fromControl(spec.rpc, err))
		return
	}
	defer sub.Close()

	out := &sseWriter{w: w, rc: http.NewResponseController(w), timeout: s.opts.WriteTimeout}
	// read_timeout bounds reading the request, not the stream's life.
	_ = out.rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	if out.raw("retry: 2000\n: stream open\n\n") != nil {
		return
	}

	keepAlive := time.NewTicker(s.opts.KeepAlive)
	defer keepAlive.Stop()
	var seq uint64
	for {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				s.endStream(out, sub)
				return
			}
			seq++
			id, ts, itemID := eventID(spec, ev.Data, seq)
			if resume != nil && resume.skip(ts, itemID) {
				continue
			}
			if out.event(id, spec.event, ev.Data) != nil {
				return
			}
		case <-keepAlive.C:
			if out.raw(": keep-alive\n\n") != nil {
				return
			}
		case <-s.stopping:
			_ = out.event("", "end", rawJSON(map[string]string{"reason": "transport shutting down"}))
			return
		case <-r.Context().Done():
			return // deferred sub.Close cancels the daemon side
		}
	}
}

func (s *Server) endStream(out *sseWriter, sub *control.Subscription) {
	if err := sub.Err(); err != nil {
		_ = out.event("", "error", rawJSON(map[string]string{"reason": "daemon connection lost"}))
		return
	}
	reason := sub.Reason()
	if reason == "" {
		reason = "stream ended"
	}
	_ = out.event("", "end", rawJSON(map[string]string{"reason": reason}))
}

// sseWriter writes SSE frames, each with its own write deadline (the
// server's WriteTimeout would otherwise cut a long stream) and a flush.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (o *sseWriter) raw(s string) error {
	_ = o.rc.SetWriteDeadline(time.Now().Add(o.timeout))
	if _, err := o.w.Write([]byte(s)); err != nil {
		return err
	}
	return o.rc.Flush()
}

func (o *sseWriter) event(id, name string, data json.RawMessage) error {
	var b bytes.Buffer
	if id != "" {
		fmt.Fprintf(&b, "id: %s\n", id)
	}
	fmt.Fprintf(&b, "event: %s\n", name)
	var compact bytes.Buffer
	if json.Compact(&compact, data) != nil {
		compact.Reset()
		compact.WriteString("null")
	}
	b.WriteString("data: ")
	b.Write(compact.Bytes()) // compact JSON has no raw newlines
	b.WriteString("\n\n")
	return o.raw(b.String())
}

// eventID is "<ts>|<id>" when the item carries both (so a reconnect can
// resume), else the stream's sequence number.
func eventID(spec streamSpec, data json.RawMessage, seq uint64) (id string, ts time.Time, itemID string) {
	fallback := strconv.FormatUint(seq, 10)
	if spec.tsField == "" || spec.idField == "" {
		return fallback, time.Time{}, ""
	}
	var item map[string]json.RawMessage
	if json.Unmarshal(data, &item) != nil {
		return fallback, time.Time{}, ""
	}
	var tsText string
	if json.Unmarshal(item[spec.tsField], &tsText) != nil {
		return fallback, time.Time{}, ""
	}
	t, err := time.Parse(time.RFC3339Nano, tsText)
	if err != nil {
		return fallback, time.Time{}, ""
	}
	itemID = scalar(item[spec.idField])
	if itemID == "" || strings.ContainsAny(itemID, "\r\n\x00|") {
		return fallback, t, itemID
	}
	return t.UTC().Format(time.RFC3339Nano) + "|" + itemID, t, itemID
}

// scalar renders a string or number id as text.
func scalar(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// resumePoint is a parsed Last-Event-ID: the last item the client saw.
type resumePoint struct {
	ts     time.Time
	id     string
	passed bool
}

// parseResume reads Last-Event-ID (or ?last_event_id= for clients that
// cannot set headers). Only "<ts>|<id>" ids of a resumable stream count.
func parseResume(r *http.Request, spec streamSpec) *resumePoint {
	if !spec.resumable {
		return nil
	}
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("last_event_id")
	}
	tsText, id, ok := strings.Cut(v, "|")
	if !ok || id == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, tsText)
	if err != nil {
		return nil
	}
	return &resumePoint{ts: t, id: id}
}

// skip drops what the client already has. The stream is asked for items
// since the last one's timestamp, so it replays that item and its
// same-timestamp predecessors; those are skipped up to and including the
// last seen id. Everything newer passes.
func (p *resumePoint) skip(ts time.Time, id string) bool {
	if p.passed || ts.IsZero() {
		return false
	}
	switch {
	case ts.Before(p.ts):
		return true
	case ts.Equal(p.ts):
		if id == p.id {
			p.passed = true
		}
		return true
	}
	p.passed = true
	return false
}
