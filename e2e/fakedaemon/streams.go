package fakedaemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/animus-plugins/animus-plugins/e2e/internal/logwire"
	"slices"
	"sync"
	"time"
)

// Event is DaemonRunEvent.
type Event struct {
	ID         string          `json:"id"`
	OccurredAt string          `json:"occurred_at"`
	Kind       string          `json:"kind"`
	Payload    json.RawMessage `json:"payload"`
}

// LogEntry is DaemonLogEntry, the same wire type as the log-storage LogEntry.
type LogEntry = logwire.Entry

// WorkflowEvent is the workflow/event payload.
type WorkflowEvent struct {
	WorkflowID string          `json:"workflow_id"`
	Kind       string          `json:"kind"`
	Payload    json.RawMessage `json:"payload"`
	OccurredAt string          `json:"occurred_at"`
}

type topic int

const (
	topicEvents topic = iota
	topicLogs
	topicWorkflow
	topicSubjects
)

type streamSpec struct {
	notification string
	topic        topic
}

// streamMethods are the four streams and their notification methods
// (§1.5).
var streamMethods = map[string]streamSpec{
	"daemon/events":   {"daemon/event", topicEvents},
	"daemon/logs":     {"daemon/log", topicLogs},
	"workflow/events": {"workflow/event", topicWorkflow},
	"subject/watch":   {"subject/changed", topicSubjects},
}

// item is one published value; closeReason set means "end workflow
// streams with subscription/closed".
type item struct {
	data        any
	ts          time.Time
	workflowID  string
	kind        string
	level       string
	source      string
	closeReason string
}

// bus fans published items out to stream drivers, dropping for a
// subscriber whose buffer is full (as the daemon's broadcast channels do),
// and keeps history for since-replay.
type bus struct {
	mu     sync.Mutex
	subs   map[*busSub]bool
	events []item
	logs   []item
	seq    int
}

type busSub struct {
	topic topic
	ch    chan item
}

func newBus() *bus { return &bus{subs: map[*busSub]bool{}} }

func (b *bus) subscribe(t topic) *busSub {
	s := &busSub{topic: t, ch: make(chan item, 256)}
	b.mu.Lock()
	b.subs[s] = true
	b.mu.Unlock()
	return s
}

func (b *bus) unsubscribe(s *busSub) {
	b.mu.Lock()
	delete(b.subs, s)
	b.mu.Unlock()
}

func (b *bus) publish(t topic, it item) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch t {
	case topicEvents:
		b.events = append(b.events, it)
	case topicLogs:
		b.logs = append(b.logs, it)
	}
	for s := range b.subs {
		if s.topic == t {
			select {
			case s.ch <- it:
			default:
			}
		}
	}
}

func (b *bus) history(t topic) []item {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t == topicEvents {
		return slices.Clone(b.events)
	}
	return slices.Clone(b.logs)
}

func (b *bus) nextID(prefix string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	return fmt.Sprintf("%s-%d", prefix, b.seq)
}

func parseTS(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Now()
	}
	return t
}

// EmitEvent publishes a daemon/event; empty ID and OccurredAt are filled.
func (d *Daemon) EmitEvent(e Event) Event {
	if e.ID == "" {
		e.ID = d.bus.nextID("evt")
	}
	if e.OccurredAt == "" {
		e.OccurredAt = stamp(time.Now())
	}
	if e.Payload == nil {
		e.Payload = json.RawMessage(`{}`)
	}
	d.bus.publish(topicEvents, item{data: e, ts: parseTS(e.OccurredAt), kind: e.Kind})
	return e
}

// EmitLog publishes a daemon/log entry; empty ID, TS, Level, Source and
// Target are filled.
func (d *Daemon) EmitLog(e LogEntry) LogEntry {
	if e.ID == "" {
		e.ID = d.bus.nextID("log")
	}
	if e.TS == "" {
		e.TS = stamp(time.Now())
	}
	if e.Level == "" {
		e.Level = "info"
	}
	if e.Source == "" {
		e.Source = "daemon"
	}
	if e.Target == "" {
		e.Target = "animus::daemon"
	}
	d.bus.publish(topicLogs, item{data: e, ts: parseTS(e.TS), level: e.Level, source: e.SourceName})
	return e
}

// EmitWorkflowEvent publishes a workflow/event.
func (d *Daemon) EmitWorkflowEvent(e WorkflowEvent) WorkflowEvent {
	if e.OccurredAt == "" {
		e.OccurredAt = stamp(time.Now())
	}
	if e.Payload == nil {
		e.Payload = json.RawMessage(`{}`)
	}
	d.bus.publish(topicWorkflow, item{data: e, workflowID: e.WorkflowID, kind: e.Kind})
	return e
}

// CloseWorkflowStreams ends every workflow/events stream with
// subscription/closed {id, reason}, the only terminal frame the daemon
// sends.
func (d *Daemon) CloseWorkflowStreams(reason string) {
	d.bus.publish(topicWorkflow, item{closeReason: reason})
}

// EmitSubjectChanged publishes subject/changed (the real daemon's
// subject/watch is empty; the fake reports its own subject changes).
func (d *Daemon) EmitSubjectChanged(change string, s Subject) {
	ev := map[string]any{"id": d.bus.nextID("chg"), "change_kind": change, "subject": s}
	d.bus.publish(topicSubjects, item{data: ev, kind: s.Kind})
}

// ActiveStreams is the number of stream drivers running.
func (d *Daemon) ActiveStreams() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for s := range d.conns {
		s.mu.Lock()
		n += len(s.streams)
		s.mu.Unlock()
	}
	return n
}

// WaitStreams waits until exactly n stream drivers run.
func (d *Daemon) WaitStreams(ctx context.Context, n int) error {
	err := d.waitFor(ctx, func() bool {
		c := 0
		for s := range d.conns {
			s.mu.Lock()
			c += len(s.streams)
			s.mu.Unlock()
		}
		return c == n
	})
	if err != nil {
		return fmt.Errorf("fakedaemon: active streams never became %d: %w", n, err)
	}
	return nil
}

// stream is one running driver.
type stream struct {
	cancel context.CancelFunc
}

type streamParams struct {
	Since      *string  `json:"since"`
	Level      *string  `json:"level"`
	Plugin     *string  `json:"plugin"`
	Follow     bool     `json:"follow"`
	WorkflowID *string  `json:"workflow_id"`
	Kinds      []string `json:"kinds"`
	Kind       *string  `json:"kind"`
}

var levelRank = map[string]int{"trace": 0, "debug": 1, "info": 2, "warn": 3, "error": 4}

// match applies a stream's filters to an item.
func (p *streamParams) match(t topic, it item) bool {
	switch t {
	case topicLogs:
		if p.Level != nil && levelRank[it.level] < levelRank[*p.Level] {
			return false
		}
		if p.Plugin != nil && it.source != *p.Plugin {
			return false
		}
	case topicWorkflow:
		if p.WorkflowID != nil && it.workflowID != *p.WorkflowID {
			return false
		}
		if len(p.Kinds) > 0 && !slices.Contains(p.Kinds, it.kind) {
			return false
		}
	case topicSubjects:
		if p.Kind != nil && it.kind != *p.Kind {
			return false
		}
	}
	return true
}

// openStream answers a stream request: validation errors or the mode's
// refusal without a stream; else the ack, history (before the ack with
// NotifyBeforeAck) and, unless it is a finite daemon/logs, a live driver.
func (s *session) openStream(f frame, spec streamSpec) {
	d := s.d
	if spec.topic == topicWorkflow {
		switch d.opts.WorkflowEvents {
		case WorkflowEventsUnavailable:
			s.reply(f.ID, nil, errf("unavailable", "workflow event broadcaster is not wired"))
			return
		case WorkflowEventsUnknown:
			s.reply(f.ID, nil, unknownMethod(f.Method))
			return
		}
	}
	var p streamParams
	if e := decode(f.Params, &p); e != nil {
		s.reply(f.ID, nil, e)
		return
	}
	var since time.Time
	if p.Since != nil {
		t, err := time.Parse(time.RFC3339Nano, *p.Since)
		if err != nil {
			s.reply(f.ID, nil, invalidParamsText("since: "+err.Error()))
			return
		}
		since = t
	}
	key := compact(f.ID)
	ctx, cancel := context.WithCancel(d.ctx)
	st := &stream{cancel: cancel}
	s.mu.Lock()
	if old := s.streams[key]; old != nil {
		old.cancel() // a second stream under the same id aborts the first
	}
	s.streams[key] = st
	s.mu.Unlock()
	sub := d.bus.subscribe(spec.topic) // before the history snapshot: nothing falls between

	var history []item
	if spec.topic == topicLogs || (spec.topic == topicEvents && p.Since != nil) {
		for _, it := range d.bus.history(spec.topic) {
			if !it.ts.Before(since) && p.match(spec.topic, it) {
				history = append(history, it)
			}
		}
		if spec.topic == topicLogs && len(history) > 200 {
			history = history[len(history)-200:]
		}
	}
	ack := func() { s.reply(f.ID, map[string]bool{"watching": true}, nil) }
	if !d.opts.NotifyBeforeAck {
		ack()
	}
	for _, it := range history {
		s.notify(spec.notification, f.ID, it.data)
	}
	if d.opts.NotifyBeforeAck {
		ack()
	}
	if spec.topic == topicLogs && !p.Follow {
		// A finite stream just stops: no end marker, connection left open.
		d.bus.unsubscribe(sub)
		s.endStream(key, st)
		return
	}
	d.broadcast()
	go s.drive(ctx, key, st, spec, &p, f.ID, sub)
}

func (s *session) drive(ctx context.Context, key string, st *stream, spec streamSpec, p *streamParams, id json.RawMessage, sub *busSub) {
	defer s.endStream(key, st)
	defer s.d.bus.unsubscribe(sub)
	for {
		select {
		case it := <-sub.ch:
			if it.closeReason != "" {
				s.write(map[string]any{"jsonrpc": "2.0", "method": "subscription/closed",
					"params": map[string]any{"id": id, "reason": it.closeReason}})
				return
			}
			if p.match(spec.topic, it) {
				s.notify(spec.notification, id, it.data)
			}
		case <-ctx.Done():
			return
		}
	}
}

func (s *session) notify(method string, id json.RawMessage, data any) {
	s.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": map[string]any{"id": id, "data": data}})
}

func (s *session) endStream(key string, st *stream) {
	st.cancel()
	s.mu.Lock()
	if s.streams[key] == st {
		delete(s.streams, key)
	}
	s.mu.Unlock()
	s.d.broadcast()
}

// cancelStream is $/cancelRequest: the driver registered under the
// stringified id stops; nothing is sent back.
func (s *session) cancelStream(params json.RawMessage) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	s.mu.Lock()
	st := s.streams[compact(p.ID)]
	s.mu.Unlock()
	if st != nil {
		st.cancel()
	}
}

func (s *session) abortStreams() {
	s.mu.Lock()
	streams := s.streams
	s.streams = map[string]*stream{}
	s.mu.Unlock()
	for _, st := range streams {
		st.cancel()
	}
	s.d.broadcast()
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
