package pluginkit

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

type echoParams struct {
	Message string `json:"message"`
	Count   int    `json:"count"`
}

type sleepParams struct {
	MS int `json:"ms"`
}

func (p sleepParams) Validate() error {
	if p.MS < 0 {
		return errors.New("ms must not be negative")
	}
	return nil
}

// testPlugin is a small plugin exercising every pluginkit feature.
func testPlugin() Plugin {
	mux := NewMux()
	Handle(mux, "test/echo", func(ctx context.Context, p echoParams) (echoParams, error) {
		return p, nil
	})
	Handle(mux, "test/sleep", func(ctx context.Context, p sleepParams) (map[string]int, error) {
		_ = Progress(ctx, map[string]any{"phase": "sleeping"})
		select {
		case <-time.After(time.Duration(p.MS) * time.Millisecond):
			return map[string]int{"slept_ms": p.MS}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	Handle(mux, "test/stream", func(ctx context.Context, p echoParams) (map[string]bool, error) {
		peer, id := PeerFrom(ctx), RequestID(ctx)
		peer.Go(func(ctx context.Context) {
			for i := range p.Count {
				if ctx.Err() != nil {
					return
				}
				_ = peer.Notify("test/event", map[string]any{"id": id, "seq": i})
			}
		})
		return map[string]bool{"streaming": true}, nil
	})
	// test/tail streams test/tick every 5 ms until its context ends, then
	// says test/stopped; "fail" fails the request after opening the stream.
	var released atomic.Int64
	Handle(mux, "test/tail", func(ctx context.Context, p echoParams) (map[string]bool, error) {
		peer, id := PeerFrom(ctx), RequestID(ctx)
		Stream(ctx, func(ctx context.Context) {
			if ctx.Err() != nil && p.Message == "fail" {
				released.Add(1) // never acked: release only, send nothing
				return
			}
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					_ = peer.Notify("test/stopped", map[string]any{"id": id})
					return
				case <-tick.C:
					_ = peer.Notify("test/tick", map[string]any{"id": id})
				}
			}
		})
		if p.Message == "fail" {
			return nil, InvalidParams("refused")
		}
		return map[string]bool{"tailing": true}, nil
	})
	Handle(mux, "test/released", func(ctx context.Context, _ struct{}) (int64, error) {
		return released.Load(), nil
	})
	Handle(mux, "test/fail", func(ctx context.Context, p echoParams) (any, error) {
		return nil, fmt.Errorf("wrapped: %w", NotFound("subject %s", p.Message))
	})
	// test/fail-object answers, as a result, the error object test/fail's
	// error becomes on the wire.
	Handle(mux, "test/fail-object", func(ctx context.Context, p echoParams) (ErrorObject, error) {
		return PeerFrom(ctx).ErrorObject(fmt.Errorf("wrapped: %w", NotFound("subject %s", p.Message))), nil
	})
	Handle(mux, "test/internal", func(ctx context.Context, p echoParams) (any, error) {
		return nil, errors.New("open /var/lib/secret/db.sqlite: permission denied, token=" + p.Message)
	})
	Handle(mux, "test/panic", func(ctx context.Context, p echoParams) (any, error) {
		panic("boom")
	})
	Handle(mux, "test/null", func(ctx context.Context, p echoParams) (*echoParams, error) {
		return nil, nil
	})
	HandleNotification(mux, "test/note", func(ctx context.Context, p echoParams) error {
		return PeerFrom(ctx).Notify("test/noted", p)
	})
	return Plugin{
		Name: "animus-test", Version: "1.2.3", Kind: "trigger_backend", Description: "pluginkit test plugin",
		Mux:               mux,
		Env:               []EnvVar{{Name: "TEST_PLUGIN_TOKEN", Description: "a secret", Sensitive: true}},
		ExtraCapabilities: []string{"$vendor/test", "test/echo"},
		Streaming:         true,
		Progress:          true,
		Health: func(ctx context.Context) HealthReport {
			return HealthReport{Status: Degraded}
		},
	}
}

func contains(list []any, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
