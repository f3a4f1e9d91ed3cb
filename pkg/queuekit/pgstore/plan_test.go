package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
)

// TestHotStatementsUseIndexes keeps every statement on the enqueue, lease,
// completion and next_deadline paths an index range scan: no Seq Scan on
// entries or audit, no Sort over them, so latency stays flat as the queue
// deepens. Unlike SQLite's, PostgreSQL's planner is cost based, so the
// namespace first gets a realistic ~2,000 entries and audit rows and
// ANALYZE.
//
// The one Sort allowed is the sweep's over its own deleted rows (a CTE
// Scan): it orders the expired entries' audit rows, O(expired) whatever
// the depth.
func TestHotStatementsUseIndexes(t *testing.T) {
	st := openT(t)
	ctx := context.Background()
	update(t, st, func(tx storage.Store) error {
		for i := range 2000 {
			e := entry(fmt.Sprint("e", i), fmt.Sprint("K", i), "pending")
			e.QualifiedID = ptr(fmt.Sprint("task:T", i))
			switch i % 10 {
			case 0, 1, 2, 3, 4:
				if i%3 == 0 {
					e.RunAt, e.RunAtNS = ptr("r"), ptr(int64(1_000+i)) // some deferred
				}
			case 5:
				e.ExpireAtNS = ptr(int64(10_000 + i))
			case 6: // old-style lease
				e.State, e.AssignedAtNS = "assigned", ptr(int64(i))
			case 7: // ticket
				e.State, e.AssignedAtNS = "assigned", ptr(int64(i))
				e.SubjectGeneration, e.RepoCollisionKey = ptr(int64(1)), ptr(fmt.Sprint("repo", i%50))
			case 8:
				e.State = "held"
			case 9:
				e.SubjectGeneration = ptr(int64(1))
			}
			if err := tx.Insert(ctx, e); err != nil {
				return err
			}
			if err := tx.Record(ctx, storage.Audit{EntryID: e.ID, SubjectKey: e.SubjectKey, At: "t", AtNS: int64(i), Method: "m", To: "pending"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err := st.db.Tx(ctx, pgkit.ReadWrite, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `ANALYZE`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	forUpdate := ` FOR UPDATE SKIP LOCKED`
	// The queue-order walks: the planner may walk entries_ordinal and
	// filter on state rather than entries_state_ordinal when most rows
	// qualify; both are ordered range scans without a sort.
	// The reclaim cutoff makes every assigned row a stuck lease: the
	// backlog that must not be sorted. (With only a handful expired the
	// planner rightly sorts those few after a range scan on state.)
	const orderedIndex = "entries_state_ordinal|entries_ordinal"
	tests := []struct {
		name, sql string
		args      []any
		index     string // the plan must use this index (or one of "a|b")
		sorts     bool   // SQLite sorts too (USE TEMP B-TREE)
	}{
		{"leasable", sqlLeasable + forUpdate, []any{1500, -1 << 62, leasableBatch}, orderedIndex, false},
		// A top-N sort of the expired old-style leases after a range on
		// state='assigned': O(assigned), as SQLite's filtered walk of the
		// assigned rows is; never O(depth).
		{"expired leases", sqlExpiredLeases + forUpdate, []any{2000, -1 << 62, leasableBatch}, "entries_state_expiry|entries_state_ordinal|entries_ordinal", true},
		{"count subject", sqlCountSubject, []any{"K7"}, "entries_subject", false},
		{"next run_at", sqlNextRunAt, []any{1500}, "entries_state_run_at", false},
		{"count deferred", sqlCountDeferred, []any{2500}, "entries_state_run_at", false},
		{"get", sqlGet, []any{"e7"}, "entries_pkey", false},
		{"insert", sqlInsert, make([]any, 27), "entries_ordinal", false},
		{"live ticketed", sqlLiveTicketed, []any{"task:T7"}, "entries_qualified", false},
		{"next generation", sqlNextGeneration, []any{"task:T7"}, "entries_qualified", false},
		{"old-style of", sqlOldStyleOf, []any{"task:T7"}, "entries_qualified", true},
		{"v2 candidates", sqlV2Candidates + forUpdate, []any{1500, 50}, orderedIndex, false},
		{"collision", sqlCollision, []any{"repo7"}, "entries_collision", false},
		{"finish", sqlFinish, []any{"e7", "completed", "t", "m"}, "entries_pkey", false},
		{"sweep", sqlSweep, []any{10_050, "t", "m"}, "entries_state_expiry", false},
		{"prune audit", sqlPruneAudit, []any{10, 100}, "audit_at", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw []byte
			err := st.db.Tx(ctx, pgkit.ReadWrite, func(ctx context.Context, tx pgx.Tx) error {
				return tx.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+tt.sql, tt.args...).Scan(&raw)
			})
			if err != nil {
				t.Fatal(err)
			}
			var plans []struct{ Plan planNode }
			if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
				t.Fatalf("plan %s: %v", raw, err)
			}
			var bad []string
			indexes := map[string]bool{}
			plans[0].Plan.walk(func(n *planNode) {
				if n.IndexName != "" {
					indexes[n.IndexName] = true
				}
				if n.NodeType == "Seq Scan" && (n.Relation == "entries" || n.Relation == "audit") {
					bad = append(bad, "Seq Scan on "+n.Relation)
				}
				if (n.NodeType == "Sort" || n.NodeType == "Incremental Sort") && !tt.sorts {
					if len(n.Plans) != 1 || n.Plans[0].NodeType != "CTE Scan" {
						bad = append(bad, n.NodeType)
					}
				}
			})
			used := false
			for _, ix := range strings.Split(tt.index, "|") {
				used = used || indexes[ix]
			}
			if len(bad) > 0 || !used {
				pretty, _ := json.MarshalIndent(plans, "", " ")
				t.Errorf("plan of %s does not stay on %s (%s):\n%s", tt.name, tt.index, strings.Join(bad, ", "), pretty)
			}
		})
	}
}

type planNode struct {
	NodeType  string     `json:"Node Type"`
	Relation  string     `json:"Relation Name"`
	IndexName string     `json:"Index Name"`
	Plans     []planNode `json:"Plans"`
}

func (n *planNode) walk(fn func(n *planNode)) {
	fn(n)
	for i := range n.Plans {
		n.Plans[i].walk(fn)
	}
}
