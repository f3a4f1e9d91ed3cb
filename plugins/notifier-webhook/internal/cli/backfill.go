package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/notifier"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/store"
)

// backfillBatch rows go into one transaction: big enough that a large
// backfill is not one fsync per event, small enough to keep the write lock
// short for a plugin running beside it.
const backfillBatch = 2000

// maxEventLine bounds one input line (the daemon's frames are bounded
// similarly).
const maxEventLine = 16 << 20

// Backfill is the backfill mode: it reads DaemonEventRecord objects (or
// {"event": …} wrappers), one per line, validates all of them, then
// enqueues their deliveries as pending rows. Events without project_root
// belong to --project. Exit codes: 0 done, 1 failed, 2 usage.
func Backfill(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("backfill", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var common commonFlags
	common.register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(env.Stderr, "backfill: reads events from stdin; no arguments")
		return 2
	}
	project, dbPath, err := common.resolve(env.Getenv)
	if err != nil {
		fmt.Fprintln(env.Stderr, "backfill:", err)
		return 1
	}
	evs, err := readEvents(env, project)
	if err != nil {
		fmt.Fprintln(env.Stderr, "backfill:", err)
		return 1
	}
	loader := &config.Loader{Getenv: env.Getenv, Home: env.Getenv("HOME")}
	var rows []store.Delivery
	unmatched := 0
	configs := map[string]*config.Config{} // one load per project, not per event
	for i, ev := range evs {
		cfg, seen := configs[*ev.ProjectRoot]
		if !seen {
			if cfg, err = loader.Load(*ev.ProjectRoot); err != nil {
				fmt.Fprintf(env.Stderr, "backfill: event %d: %v\n", i+1, err)
				return 1
			}
			configs[*ev.ProjectRoot] = cfg
		}
		var ds []store.Delivery
		if cfg != nil {
			if ds, err = notifier.BuildDeliveries(cfg, ev); err != nil {
				fmt.Fprintf(env.Stderr, "backfill: event %d: %v\n", i+1, err)
				return 1
			}
		}
		if len(ds) == 0 {
			unmatched++
		}
		rows = append(rows, ds...)
	}
	st, err := store.Open(ctx, store.Options{Path: dbPath})
	if err != nil {
		fmt.Fprintln(env.Stderr, "backfill:", err)
		return 1
	}
	defer st.Close()
	inserted := 0
	for start := 0; start < len(rows); start += backfillBatch {
		got, err := st.Enqueue(ctx, rows[start:min(start+backfillBatch, len(rows))], nil, nil)
		if err != nil {
			// Earlier batches are committed; running the command again
			// skips them by delivery_key.
			fmt.Fprintf(env.Stderr, "backfill: %v (%d deliveries enqueued before the failure; rerun to continue)\n", err, inserted)
			return 1
		}
		inserted += len(got)
	}
	fmt.Fprintf(env.Stdout, "read %d event(s): %d deliveries enqueued, %d already in the outbox, %d event(s) matched no subscription\n",
		len(evs), inserted, len(rows)-inserted, unmatched)
	return 0
}

func readEvents(env Env, project string) ([]*notifier.Event, error) {
	sc := bufio.NewScanner(env.Stdin)
	sc.Buffer(make([]byte, 64<<10), maxEventLine)
	var out []*notifier.Event
	for line := 1; sc.Scan(); line++ {
		raw := sc.Bytes()
		if len(raw) == 0 {
			continue
		}
		var wrapper struct {
			Event *notifier.Event `json:"event"`
		}
		var ev notifier.Event
		if err := json.Unmarshal(raw, &wrapper); err == nil && wrapper.Event != nil {
			ev = *wrapper.Event
		} else if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("line %d: not a daemon event record: %v", line, err)
		}
		if ev.ProjectRoot == nil || *ev.ProjectRoot == "" {
			ev.ProjectRoot = &project
		}
		if err := ev.Validate(); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		out = append(out, &ev)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading stdin: %v", err)
	}
	return out, nil
}
