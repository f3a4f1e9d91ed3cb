package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
)

// TestHotStatementsUseIndexes keeps begin_step's lookup, query_run and
// recover_in_flight on their indexes: no Seq Scan on steps, so latency
// stays flat as committed steps pile up. PostgreSQL's planner is cost
// based, so the namespace first gets a few thousand steps (mostly
// committed, a few reserved, some abandoned and superseded) over a
// hundred runs, and ANALYZE.
func TestHotStatementsUseIndexes(t *testing.T) {
	st := openT(t)
	ctx := context.Background()
	const runs, perRun = 100, 40
	update(t, st, func(tx storage.Store) error {
		for r := range runs {
			run := fmt.Sprint("run-", r)
			epoch, err := tx.NextEpoch(ctx)
			if err != nil {
				return err
			}
			if err := tx.UpsertRun(ctx, run, "p", epoch, nil, t0); err != nil {
				return err
			}
			for i := range perRun {
				id := fmt.Sprintf("step-%d-%d", r, i)
				at := t0.Add(time.Duration(i) * time.Second)
				if err := tx.InsertReservation(ctx, storage.Step{ID: id, Identity: storage.Identity{RunID: run, PhaseID: "p", StepName: fmt.Sprint(i)},
					IdempotencyKey: id, ReservedAt: at, ExpiresAt: at.Add(time.Minute)}); err != nil {
					return err
				}
				switch {
				case i == perRun-1 && r%10 == 0: // a few outstanding
				case i == perRun-2:
					if _, err := tx.Abandon(ctx, id, "why", at); err != nil {
						return err
					}
				case i == perRun-3:
					if err := tx.Supersede(ctx, id, "other", at); err != nil {
						return err
					}
				default:
					if err := tx.Commit(ctx, id, "success", []byte(`1`), nil, at); err != nil {
						return err
					}
				}
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
	tests := []struct {
		name, sql string
		args      []any
		index     string // the plan must use this index on steps
	}{
		{"active step", sqlActiveStep, []any{"step-7-3"}, "steps_active_key"},
		{"committed steps", sqlCommittedSteps, []any{"run-7", "p"}, "steps_commits"},
		{"in flight", sqlInFlight, []any{int64(0)}, "steps_reserved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw []byte
			err := st.db.Tx(ctx, pgkit.ReadOnly, func(ctx context.Context, tx pgx.Tx) error {
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
				if n.NodeType == "Seq Scan" && n.Relation == "steps" {
					bad = append(bad, "Seq Scan on steps")
				}
			})
			if len(bad) > 0 || !indexes[tt.index] {
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
