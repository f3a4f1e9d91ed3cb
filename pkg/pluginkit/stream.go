package pluginkit

import (
	"context"
	"encoding/json"
)

// Stream runs fn in the background for the stream the current request
// opens (a tail, a watch). It is AfterReply and Peer.Go in one, plus the
// one thing neither gives: a way for the host to stop the stream.
//
//   - fn starts only once the request's success response is written, so no
//     notification overtakes the ack.
//   - fn's context ends when the plugin drains (shutdown, exit, EOF,
//     SIGTERM; draining waits for fn, bounded) or when the host sends
//     $/cancelRequest for this request's id after the ack. Before the ack
//     that notification cancels the request itself (answered -32002);
//     after it, there is no request left to cancel, only its stream.
//   - If the request fails or is cancelled before its ack, fn still runs
//     once, with its context already done, so it can release what the
//     handler opened for it (a websocket, a subscription). It must not
//     send anything then.
//
// Outside a request handler, or once the response is out, fn starts at
// once with the plugin's drain context.
func Stream(ctx context.Context, fn func(ctx context.Context)) {
	p := PeerFrom(ctx)
	c, _ := ctx.Value(callKey).(*call)
	if p == nil {
		panic("pluginkit.Stream: ctx does not come from a handler")
	}
	if c != nil {
		c.mu.Lock()
		if !c.answered {
			c.streams = append(c.streams, fn)
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
	p.Go(fn)
}

// stream is one running Stream, so $/cancelRequest can find it by id.
type stream struct{ cancel context.CancelFunc }

// startStreams runs the streams a call registered, live when its success
// was written (ok) and already cancelled otherwise.
func (s *server) startStreams(id json.RawMessage, fns []func(context.Context), ok bool) {
	for _, fn := range fns {
		ctx, cancel := context.WithCancel(s.life)
		st := &stream{cancel: cancel}
		if ok {
			s.trackStream(id, st, true)
		} else {
			cancel()
		}
		s.tasks.Add(1)
		go func() {
			defer s.tasks.Done()
			defer cancel()
			if ok {
				defer s.trackStream(id, st, false)
			}
			fn(ctx)
		}()
	}
}

func (s *server) trackStream(id json.RawMessage, st *stream, add bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := string(id)
	set := s.streams[key]
	if add {
		if set == nil {
			set = map[*stream]struct{}{}
			s.streams[key] = set
		}
		set[st] = struct{}{}
		return
	}
	delete(set, st)
	if len(set) == 0 {
		delete(s.streams, key)
	}
}

// cancelStreams stops the streams of an answered request; it reports
// whether there were any.
func (s *server) cancelStreams(id json.RawMessage) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	set := s.streams[string(id)]
	for st := range set {
		st.cancel() // only cancels a context: safe under the lock
	}
	return len(set) > 0
}
