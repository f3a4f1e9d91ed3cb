package logstore

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/cursor"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/logql"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/loki"
)

// Tail tunables.
const (
	// tailOverlap re-reads this much before the last seen entry (or the
	// tail's opening) so out-of-order arrivals are not missed; the seen
	// set drops what was already sent.
	tailOverlap = 10 * time.Second
	// tailRetries consecutive failures to reach Loki end a live tail with
	// an error notification.
	tailRetries = 5
	tailSeen    = 20_000
	wsLimit     = 1000
)

// TailAck is the immediate answer to log_storage/tail.
type TailAck struct {
	Tailing bool `json:"tailing"`
}

// tailEvent is log_storage/event's params: the tail request id exactly
// as sent, and one entry or the error that ends the tail.
type tailEvent struct {
	ID    json.RawMessage        `json:"id"`
	Entry *Entry                 `json:"entry,omitempty"`
	Error *pluginkit.ErrorObject `json:"error,omitempty"`
}

// tail answers log_storage/tail. The backlog (the newest limit matches,
// oldest first, as query returns them) is read before the ack, so a tail
// that cannot be opened is an error response. Events start once the ack
// is written. follow:false ends after the backlog; follow:true then
// streams live entries from Loki (websocket, or polling in
// LOKI_TAIL_MODE=poll) and from this process's own stores, deduplicated
// by id, until the plugin drains, the host sends $/cancelRequest for the
// tail's id, or Loki stays unreachable.
func (s *Service) tail(ctx context.Context, p QueryParams) (TailAck, error) {
	c, err := s.ready()
	if err != nil {
		return TailAck{}, err
	}
	opened := time.Now()
	pl, err := s.plan(p, opened)
	if err != nil {
		return TailAck{}, err
	}
	backlog, _, err := s.page(ctx, c, pl, cursor.Backward)
	if err != nil {
		return TailAck{}, err
	}
	peer, id := pluginkit.PeerFrom(ctx), pluginkit.RequestID(ctx)
	follow := p.Follow != nil && *p.Follow
	var live *liveTail
	if follow {
		live = &liveTail{s: s, c: c, pl: pl, peer: peer, id: id, seen: newSeenSet(tailSeen), from: opened.Add(-tailOverlap).UnixNano()}
		live.updates, live.unsubscribe = s.buf.subscribe()
		if s.cfg.TailMode == "ws" {
			if live.conn, err = c.Tail(ctx, live.query(), live.from, wsLimit); err != nil {
				live.unsubscribe()
				return TailAck{}, rpcError("tail", err)
			}
		}
	}
	// Stream starts after the ack is written, ends on drain or on the
	// host's $/cancelRequest for this tail's id, and runs with its context
	// already done when the tail is refused or cancelled before its ack:
	// then it only releases the websocket and the buffer subscription.
	pluginkit.Stream(ctx, func(life context.Context) {
		if life.Err() != nil {
			if live != nil {
				live.release()
			}
			return
		}
		emit := func(r record) bool {
			return peer.Notify("log_storage/event", tailEvent{ID: id, Entry: &r.Entry}) == nil
		}
		for _, r := range backlog {
			if live != nil {
				live.seen.add(r.Entry.ID)
				live.from = max(live.from, r.NS-tailOverlap.Nanoseconds())
			}
			if !emit(r) {
				break
			}
		}
		if live != nil {
			live.run(life, emit)
		}
	})
	return TailAck{Tailing: true}, nil
}

// liveTail is the follow:true part of a tail.
type liveTail struct {
	s           *Service
	c           *loki.Client
	pl          *plan
	peer        *pluginkit.Peer
	id          json.RawMessage
	seen        *seenSet
	from        int64 // ns: where a (re)connection or poll resumes
	conn        *loki.TailConn
	updates     <-chan []record
	unsubscribe func()
}

// release frees what tail opened for a stream that never started.
func (t *liveTail) release() {
	t.unsubscribe()
	if t.conn != nil {
		t.conn.Close()
	}
}

func (t *liveTail) query() string {
	return logql.Query(t.pl.filter, t.s.queryOptions())
}

// offer sends r if it lies in the tail's window (an explicit until still
// bounds a live tail), passes the filter and was not sent yet.
func (t *liveTail) offer(r record, emit func(record) bool) bool {
	if r.NS < t.pl.start || (t.pl.hasUntil && r.NS >= t.pl.end) {
		return true
	}
	if !t.pl.match.Match(r.Entry.Level, r.Entry.Source, r.sourceName(), r.Entry.Target) || !t.seen.add(r.Entry.ID) {
		return true
	}
	return emit(r)
}

func (t *liveTail) run(ctx context.Context, emit func(record) bool) {
	defer t.unsubscribe()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	frames := make(chan []record, 16)
	failed := make(chan error, 1)
	go func() {
		var err error
		if t.conn != nil {
			err = t.followWS(ctx, frames)
		} else {
			err = t.followPoll(ctx, frames)
		}
		failed <- err
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case err := <-failed:
			if ctx.Err() == nil && err != nil {
				t.fail(err)
			}
			return
		case recs := <-t.updates:
			for _, r := range recs {
				if !t.offer(r, emit) {
					return
				}
			}
		case recs := <-frames:
			for _, r := range recs {
				if !t.offer(r, emit) {
					return
				}
			}
		}
	}
}

// fail sends the one error notification that ends the tail. Its error
// object is built by pluginkit exactly as an error response would be.
func (t *liveTail) fail(err error) {
	e := rpcError("tail", err)
	var pe *pluginkit.Error
	if !errors.As(e, &pe) {
		e = pluginkit.Unavailable("tail lost")
	}
	t.s.log.Warn("tail ended by an error", "error", err)
	eo := t.peer.ErrorObject(e)
	_ = t.peer.Notify("log_storage/event", tailEvent{ID: t.id, Error: &eo})
}

// followWS reads websocket frames, reconnecting from the last seen
// timestamp (minus the overlap) when Loki closes or drops the tail. It
// returns an error after tailRetries consecutive failed reconnections.
func (t *liveTail) followWS(ctx context.Context, out chan<- []record) error {
	conn := t.conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	failures := 0
	backoff := 100 * time.Millisecond
	for {
		if conn == nil {
			var err error
			conn, err = t.c.Tail(ctx, t.query(), t.from, wsLimit)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				if failures++; failures >= tailRetries {
					return err
				}
				if !sleep(ctx, backoff) {
					return nil
				}
				backoff = min(backoff*2, 2*time.Second)
				continue
			}
			failures, backoff = 0, 100*time.Millisecond
		}
		f, err := conn.Next(ctx)
		if err != nil {
			conn.Close()
			conn = nil
			if ctx.Err() != nil {
				return nil
			}
			t.s.log.Info("tail connection ended; reconnecting", "error", err)
			continue
		}
		if f.Dropped > 0 {
			t.s.log.Warn("Loki dropped tail entries (the tail fell behind)", "dropped", f.Dropped)
		}
		recs := make([]record, 0, len(f.Entries))
		for _, res := range f.Entries {
			r := fromResult(res)
			t.from = max(t.from, r.NS-tailOverlap.Nanoseconds())
			recs = append(recs, r)
		}
		select {
		case out <- recs:
		case <-ctx.Done():
			return nil
		}
	}
}

// followPoll runs query_range forward from the last seen timestamp (minus
// the overlap) every LOKI_TAIL_POLL_INTERVAL.
func (t *liveTail) followPoll(ctx context.Context, out chan<- []record) error {
	failures := 0
	for {
		if !sleep(ctx, t.s.cfg.TailPollInterval) {
			return nil
		}
		end := time.Now().Add(time.Second).UnixNano()
		res, err := t.c.QueryRange(ctx, loki.Range{Query: t.query(), Start: t.from, End: end, Limit: maxLimit})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if failures++; failures >= tailRetries {
				return err
			}
			continue
		}
		failures = 0
		recs := make([]record, 0, len(res))
		for _, r := range res {
			recs = append(recs, fromResult(r))
		}
		recs = dedupSorted(recs)
		if n := len(recs); n > 0 {
			next := recs[n-1].NS - tailOverlap.Nanoseconds()
			if len(res) >= maxLimit {
				// Loki cut the answer at the limit: resume at its last
				// timestamp (the seen set drops what was sent), or a
				// burst of more than maxLimit entries inside the overlap
				// would be re-read from the same start forever.
				next = recs[n-1].NS
			}
			t.from = max(t.from, next)
		}
		select {
		case out <- recs:
		case <-ctx.Done():
			return nil
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}
