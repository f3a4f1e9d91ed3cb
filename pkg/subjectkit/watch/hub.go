package watch

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// Method is the notification every event is sent as.
const Method = "subject/changed"

// batch is how many log rows one poll reads at a time.
const batch = 256

// Source is the change log.
type Source interface {
	LastEventSeq(ctx context.Context) (int64, error)
	EventsAfter(ctx context.Context, after int64, limit int) ([]storage.EventRow, error)
}

// Notifier sends one notification frame (pluginkit.Peer.Notify).
type Notifier func(method string, params any) error

// Hub holds the live watches and the poller that feeds them.
type Hub struct {
	src   Source
	hints model.Hints
	poll  time.Duration
	log   *slog.Logger

	mu       sync.Mutex
	notify   Notifier
	watchers map[string]*watcher
	nudge    chan struct{}
}

type watcher struct {
	key    string
	reqID  json.RawMessage // echoed verbatim as params.id
	filter model.Filter

	mu     sync.Mutex // held while sending, so Unwatch waits out a send in progress
	after  int64      // last seq this watcher has been offered
	closed bool
	done   chan struct{} // closed with closed
	armed  bool          // guarded by Hub.mu; see Watch
}

// params is the notification's params: {id, event}.
type params struct {
	ID    json.RawMessage `json:"id"`
	Event json.RawMessage `json:"event"`
}

// New returns a hub reading src every poll interval.
func New(src Source, hints model.Hints, poll time.Duration, log *slog.Logger) *Hub {
	return &Hub{src: src, hints: hints, poll: poll, log: log, watchers: map[string]*watcher{}, nudge: make(chan struct{}, 1)}
}

// SetLogger replaces the logger; call it before Run.
func (h *Hub) SetLogger(log *slog.Logger) { h.log = log }

// Watch registers a watcher under key (the stringified request id). It
// sees every event committed after this call; a watch with the same key
// replaces the old one. Nothing is sent until the registration is armed:
// the caller arms it once the watch's ack is on the wire (pluginkit.Stream),
// so no event can overtake the ack. Events committed meanwhile are not
// lost: they wait in the change log.
func (h *Hub) Watch(ctx context.Context, key string, reqID json.RawMessage, f model.Filter) (*Registration, error) {
	after, err := h.src.LastEventSeq(ctx)
	if err != nil {
		return nil, err
	}
	w := &watcher{key: key, reqID: reqID, filter: f, after: after, done: make(chan struct{})}
	h.mu.Lock()
	old := h.watchers[key]
	h.watchers[key] = w
	h.mu.Unlock()
	if old != nil {
		old.close()
	}
	return &Registration{hub: h, w: w}, nil
}

// Registration is one watch, held by the request that opened it.
type Registration struct {
	hub *Hub
	w   *watcher
}

// Arm starts delivery to the watcher.
func (r *Registration) Arm() {
	r.hub.mu.Lock()
	r.w.armed = true
	r.hub.mu.Unlock()
	r.hub.Nudge()
}

// Done is closed once the watch has stopped, for whatever reason: unwatch,
// a newer watch under its key, a failed send, Stop, or the hub's end.
func (r *Registration) Done() <-chan struct{} { return r.w.done }

// Stop ends this watch and no other: a newer watch registered under the
// same key stays. Once it returns no further event is sent for it.
func (r *Registration) Stop() {
	r.hub.mu.Lock()
	if r.hub.watchers[r.w.key] == r.w {
		delete(r.hub.watchers, r.w.key)
	}
	r.hub.mu.Unlock()
	r.w.close()
}

// Unwatch stops the watcher under key; once it returns no further event
// is sent for it. It reports whether there was one.
func (h *Hub) Unwatch(key string) bool {
	h.mu.Lock()
	w := h.watchers[key]
	delete(h.watchers, key)
	h.mu.Unlock()
	if w != nil {
		w.close()
	}
	return w != nil
}

// Len is the number of live watchers.
func (h *Hub) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.watchers)
}

// Nudge makes the poller look at the log now (after an in-process commit).
func (h *Hub) Nudge() {
	select {
	case h.nudge <- struct{}{}:
	default:
	}
}

// Run polls until ctx ends, then drops every watcher. notify sends the
// frames.
func (h *Hub) Run(ctx context.Context, notify Notifier) {
	h.mu.Lock()
	h.notify = notify
	h.mu.Unlock()
	t := time.NewTicker(h.poll)
	defer t.Stop()
	defer h.closeAll()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-h.nudge:
		}
		h.deliver(ctx)
	}
}

func (h *Hub) closeAll() {
	h.mu.Lock()
	ws := h.watchers
	h.watchers = map[string]*watcher{}
	h.mu.Unlock()
	for _, w := range ws {
		w.close()
	}
}

// deliver reads every event newer than the furthest-behind watcher and
// offers each, in seq order, to every watcher.
func (h *Hub) deliver(ctx context.Context) {
	// Watchers not yet armed sit this pass out entirely (their position
	// does not move), so they later get every event in order.
	h.mu.Lock()
	ws := make([]*watcher, 0, len(h.watchers))
	for _, w := range h.watchers {
		if w.armed {
			ws = append(ws, w)
		}
	}
	notify := h.notify
	h.mu.Unlock()
	if len(ws) == 0 || notify == nil {
		return
	}
	lo := ws[0].position()
	for _, w := range ws[1:] {
		lo = min(lo, w.position())
	}
	for ctx.Err() == nil {
		evs, err := h.src.EventsAfter(ctx, lo, batch)
		if err != nil {
			if ctx.Err() == nil {
				h.log.Warn("watch: reading the change log failed; retrying on the next poll", "error", err)
			}
			return
		}
		if len(evs) == 0 {
			return
		}
		if evs[0].Seq > lo+1 {
			h.log.Warn("watch: change-log entries were pruned before delivery; some events are lost (the daemon re-lists)",
				"from_seq", lo+1, "to_seq", evs[0].Seq-1)
		}
		for _, ev := range evs {
			var e struct {
				Subject *model.Subject `json:"subject"`
			}
			if err := json.Unmarshal(ev.Event, &e); err != nil || e.Subject == nil {
				h.log.Error("watch: undecodable change-log entry skipped", "seq", ev.Seq, "error", err)
				continue
			}
			for _, w := range ws {
				if w.offer(ev, e.Subject, h.hints, notify) != nil {
					h.Unwatch(w.key)
				}
			}
		}
		lo = evs[len(evs)-1].Seq
		if len(evs) < batch {
			return
		}
	}
}

func (w *watcher) position() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.after
}

// offer sends ev if this watcher has not seen it and its filter matches.
// An error means the connection is gone.
func (w *watcher) offer(ev storage.EventRow, sub *model.Subject, hints model.Hints, notify Notifier) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || ev.Seq <= w.after {
		return nil
	}
	w.after = ev.Seq
	if !w.filter.Match(sub, hints) {
		return nil
	}
	return notify(Method, params{ID: w.reqID, Event: ev.Event})
}

func (w *watcher) close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.done)
	}
	w.mu.Unlock()
}
