package sqlitestore

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHotStatementsUseIndexes keeps every statement on the enqueue, lease,
// completion and next_deadline paths a range search: no full scan, no
// temporary sort, so lease latency stays flat as the queue deepens. The
// plans come from the schema alone (no ANALYZE), as in production.
func TestHotStatementsUseIndexes(t *testing.T) {
	st := openT(t, filepath.Join(t.TempDir(), "q.sqlite"), time.Second)
	tests := []struct {
		name, sql string
		args      []any
		index     string // the plan must name this index
	}{
		{"leasable", sqlLeasable, []any{1}, "entries_state_ordinal"},
		{"expired leases", sqlExpiredLeases, []any{1}, "entries_state_ordinal"},
		{"count subject", sqlCountSubject, []any{"k"}, "entries_subject"},
		{"next run_at", sqlNextRunAt, []any{1}, "entries_state_run_at"},
		{"count deferred", sqlCountDeferred, []any{1}, "entries_state_run_at"},
		{"get", sqlGet, []any{"id"}, "sqlite_autoindex_entries_1"},
		{"insert", sqlInsert, make([]any, 26), "entries_ordinal"},
		{"live ticketed", sqlLiveTicketed, []any{"task:T"}, "entries_qualified"},
		{"v2 candidates", sqlV2Candidates, []any{1, 50}, "entries_state_ordinal"},
		{"collision", sqlCollision, []any{"k"}, "entries_collision"},
		{"sweep audit", sqlSweepAudit, []any{"t", 1, "m", 1}, "entries_state_expiry"},
		{"sweep delete", sqlSweepDelete, []any{1}, "entries_state_expiry"},
		{"prune audit", sqlPruneAudit, []any{1, 10}, "audit_at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := st.db.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+tt.sql, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			text := strings.Join(plan, "\n")
			if strings.Contains(text, "SCAN ") || strings.Contains(text, "TEMP B-TREE") || !strings.Contains(text, tt.index) {
				t.Errorf("plan of %s does not stay on %s:\n%s", tt.name, tt.index, text)
			}
		})
	}
}
