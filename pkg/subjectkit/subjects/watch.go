package subjects

import (
	"context"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

type watchAck struct {
	Watching bool `json:"watching"`
}

// watch registers a cross-process watch under the request id and
// acknowledges it; events follow as subject/changed {id, event}. Params:
// nothing, a bare SubjectFilter, or the daemon's {kind?, filter?}.
func (sc scope) watch(ctx context.Context, p filterParams) (*watchAck, error) {
	f := p.filter
	kinds := sc.filterKinds(f)
	if len(kinds) == 0 {
		// Nothing this method serves can ever match: acknowledge without
		// a watcher (there is nothing to send).
		return &watchAck{Watching: true}, nil
	}
	f.Kind, f.ScopeKinds = kinds, nil
	id := pluginkit.RequestID(ctx)
	reg, err := sc.app.hub.Watch(ctx, watchKey(id), id, f)
	if err != nil {
		return nil, rpcError(err, "")
	}
	// Events start once the ack is written, so none can precede it. The
	// watch then lasts until unwatch, a newer watch with this id, or the
	// stream's end: drain, or $/cancelRequest for this id after the ack.
	// A request that fails or is cancelled before its ack drops the
	// watcher it registered.
	pluginkit.Stream(ctx, func(ctx context.Context) {
		if ctx.Err() != nil {
			reg.Stop()
			return
		}
		reg.Arm()
		select {
		case <-ctx.Done():
			reg.Stop()
		case <-reg.Done():
		}
	})
	return &watchAck{Watching: true}, nil
}

// unwatch stops a watch: {watch_id: "<request id>"} (a number is accepted
// too). It is idempotent: an unknown or finished watch is already stopped.
func (sc scope) unwatch(_ context.Context, p unwatchParams) (*okResult, error) {
	sc.app.hub.Unwatch(p.key)
	return &okResult{OK: true}, nil
}

// unwatchNotification is the daemon's form: the same params, no reply.
func (sc scope) unwatchNotification(_ context.Context, p unwatchParams) error {
	sc.app.hub.Unwatch(p.key)
	return nil
}
