package fakeloki

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/coder/websocket"
)

// maxDelayFor is Loki's upper bound for delay_for, in seconds.
const maxDelayFor = 5

type tailParams struct {
	q     *logQuery
	start time.Time
	delay time.Duration
	limit int
}

func (s *Server) parseTail(r *http.Request) (tailParams, error) {
	var p tailParams
	q, err := parseLogQL(r.URL.Query().Get("query"))
	if err != nil {
		return p, err
	}
	p.q = q
	p.start = s.opts.Now().Add(-time.Hour)
	if v := r.URL.Query().Get("start"); v != "" {
		if p.start, err = parseTime(v); err != nil {
			return p, fmt.Errorf("invalid parameter \"start\": %v", err)
		}
	}
	if v := r.URL.Query().Get("delay_for"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return p, fmt.Errorf("invalid parameter \"delay_for\": %q", v)
		}
		if n > maxDelayFor {
			return p, fmt.Errorf("delay_for can't be greater than %d", maxDelayFor)
		}
		p.delay = time.Duration(n) * time.Second
	}
	p.limit = 100
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return p, fmt.Errorf("invalid parameter \"limit\": %q", v)
		}
		p.limit = n
	}
	if p.limit > s.opts.MaxEntriesLimitPerQuery {
		return p, fmt.Errorf("max entries limit per query exceeded, limit > max_entries_limit_per_query (%d > %d)", p.limit, s.opts.MaxEntriesLimitPerQuery)
	}
	return p, nil
}

// tailFrame is one websocket message, Loki's TailResponse.
type tailFrame struct {
	Streams        []map[string]any `json:"streams"`
	DroppedEntries []droppedEntry   `json:"dropped_entries"`
}

type droppedEntry struct {
	Labels    map[string]string `json:"labels"`
	Timestamp string            `json:"timestamp"`
}

// handleTail replays up to limit entries from start (forward), then sends
// every newly pushed matching entry, one frame per push, after delay_for.
// Labels are merged (stream + structured metadata + parsed), as Loki's tail
// does without categorize-labels.
func (s *Server) handleTail(w http.ResponseWriter, r *http.Request) {
	p, err := s.parseTail(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.noteTail(p.start)
	tenantID := tenantOf(r)
	sub, streams := s.store.subscribe(tenantID)
	defer s.store.unsubscribe(sub)

	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer func() { _ = c.CloseNow() }()
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	defer s.trackTail(cancel)()
	// Notice the client's close (reads are otherwise unused). The read
	// must not use ctx: coder/websocket tears the connection down when a
	// Read's context ends, which would race the normal close below that
	// CloseTails asks for. The deferred CloseNow ends this read.
	go func() {
		for {
			if _, _, err := c.Read(context.Background()); err != nil {
				cancel()
				return
			}
		}
	}()

	var replay []result
	for _, st := range streams {
		if !p.q.matchesSelector(st.labels) {
			continue
		}
		for _, e := range st.entries {
			if e.TS.Before(p.start) {
				continue
			}
			if res, ok := p.q.run(st.labels, e); ok {
				replay = append(replay, res)
			}
		}
	}
	sortResults(replay)
	if len(replay) > p.limit {
		replay = replay[:p.limit]
	}
	if len(replay) > 0 {
		if err := writeFrame(ctx, c, tailFrame{Streams: encodeStreams(replay, false)}); err != nil {
			return
		}
	}
	for {
		select {
		case <-ctx.Done():
			_ = c.Close(websocket.StatusNormalClosure, "")
			return
		case batch := <-sub.ch:
			if p.delay > 0 {
				select {
				case <-time.After(p.delay):
				case <-ctx.Done():
					continue
				}
			}
			var out []result
			for _, pe := range batch {
				if !p.q.matchesSelector(pe.st.labels) {
					continue
				}
				if res, ok := p.q.run(pe.st.labels, pe.e); ok {
					out = append(out, res)
				}
			}
			var dropped []droppedEntry
			for _, pe := range sub.takeDropped() {
				if p.q.matchesSelector(pe.st.labels) {
					dropped = append(dropped, droppedEntry{Labels: pe.st.labels, Timestamp: strconv.FormatInt(pe.e.TS.UnixNano(), 10)})
				}
			}
			if len(out) == 0 && len(dropped) == 0 {
				continue
			}
			if err := writeFrame(ctx, c, tailFrame{Streams: encodeStreams(out, false), DroppedEntries: dropped}); err != nil {
				return
			}
		}
	}
}

func sortResults(rs []result) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i].e, rs[j].e
		if !a.TS.Equal(b.TS) {
			return a.TS.Before(b.TS)
		}
		return a.seq < b.seq
	})
}

func writeFrame(ctx context.Context, c *websocket.Conn, f tailFrame) error {
	if f.Streams == nil {
		f.Streams = []map[string]any{}
	}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return c.Write(wctx, websocket.MessageText, b)
}

// trackTail registers an open tail for CloseTails and returns its
// deregistration.
func (s *Server) trackTail(cancel context.CancelFunc) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tails == nil {
		s.tails = map[*context.CancelFunc]struct{}{}
	}
	key := &cancel
	s.tails[key] = struct{}{}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.tails, key)
	}
}

// CloseTails ends every open tail with a normal websocket close, as Loki's
// querier does after tail_max_duration; the server keeps running, so
// clients can reconnect. It returns how many tails were open.
func (s *Server) CloseTails() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.tails {
		(*k)()
	}
	return len(s.tails)
}

// OpenTails counts the tails currently connected.
func (s *Server) OpenTails() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tails)
}
