package pluginkit

import (
	"context"
	"encoding/json"
)

// Stream runs fn in the background for the stream the current request
// opens (a tail, a watch), and gives the host a way to stop it.
//
//   - fn starts only once the request's success response is written, so no
//     notification overtakes the ack.
//   - fn's context ends when the plugin drains (shutdown, exit, EOF,
//     SIGTERM; draining waits for fn within its budget) or when the host
//     sends $/cancelRequest for this request's id after the ack. Before the
//     ack that notification cancels the request itself (answered -32002);
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
	if p == nil {
		panic("pluginkit.Stream: ctx does not come from a handler")
	}
	s := p.s
	if c, _ := ctx.Value(callKey).(*call); c != nil {
		queued := false
		s.updateInFlight(func(*inFlightState) {
			if !c.answered {
				c.streams = append(c.streams, fn)
				queued = true
			}
		})
		if queued {
			return
		}
	}
	s.runTask(s.life, fn, nil)
}

// stream is one Stream of an answered request, so $/cancelRequest can
// find it by the request's id.
type stream struct {
	fn     func(context.Context)
	ctx    context.Context
	cancel context.CancelFunc
	live   bool // registered under the id; false: started already cancelled
}

// addStreams makes the streams a call registered: live and registered
// under its id when its success is about to be written (ok), already
// cancelled otherwise. It runs inside updateInFlight.
func (st *inFlightState) addStreams(life context.Context, id json.RawMessage, fns []func(context.Context), ok bool) []*stream {
	out := make([]*stream, 0, len(fns))
	for _, fn := range fns {
		ctx, cancel := context.WithCancel(life)
		sm := &stream{fn: fn, ctx: ctx, cancel: cancel, live: ok}
		if ok {
			if st.streams[string(id)] == nil {
				st.streams[string(id)] = map[*stream]struct{}{}
			}
			st.streams[string(id)][sm] = struct{}{}
		} else {
			cancel()
		}
		out = append(out, sm)
	}
	return out
}

// startStreams runs the streams addStreams made; a live one is removed
// from its id's set when it returns.
func (s *server) startStreams(id json.RawMessage, streams []*stream) {
	key := string(id)
	for _, sm := range streams {
		s.runTask(sm.ctx, sm.fn, func() {
			sm.cancel()
			if !sm.live {
				return
			}
			s.updateInFlight(func(f *inFlightState) {
				delete(f.streams[key], sm)
				if len(f.streams[key]) == 0 {
					delete(f.streams, key)
				}
			})
		})
	}
}
