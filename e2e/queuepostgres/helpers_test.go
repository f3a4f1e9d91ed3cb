package queuepostgres

import (
	"context"
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/scratch"
)

// binaryName is the plugin under test.
var binaryName = pgns.Queue.Binary

const (
	sqliteName = "animus-queue-sqlite"
	envSchema  = "ANIMUS_QUEUE_PG_SCHEMA"
)

// envMap is q's environment as the conformance runner takes it.
func envMap(q pgns.NS) map[string]string {
	return map[string]string{"ANIMUS_QUEUE_PG_DSN": q.DSN, envSchema: q.Schema}
}

// isolate gives every conformance scenario (and every further project a
// scenario makes) a fresh schema in q's database, dropped when the
// scenario ends. It returns errors rather than failing t: scenarios may
// call it from their own goroutines.
func isolate(t testing.TB, q pgns.NS) conformance.IsolateFunc {
	return func() (map[string]string, func(), error) {
		name, drop, err := scratch.NewSchema(context.Background(), q.DSN, "t")
		if err != nil {
			return nil, nil, err
		}
		return map[string]string{envSchema: name}, func() {
			if err := drop(); err != nil {
				t.Errorf("%v", err)
			}
		}, nil
	}
}
