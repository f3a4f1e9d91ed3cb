package inspect

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/queuekit/queue"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/wire"
	"github.com/animus-plugins/animus-plugins/plugins/queue-sqlite/internal/config"
)

// Report is what inspect prints; --json prints it as is.
type Report struct {
	Database string       `json:"database"`
	Stats    wire.Stats   `json:"stats"`
	Entries  []wire.Entry `json:"entries"`
	Audit    []AuditRow   `json:"audit"`
}

// AuditRow is one status transition.
type AuditRow struct {
	Seq        int64   `json:"seq"`
	At         string  `json:"at"`
	EntryID    string  `json:"entry_id"`
	SubjectID  string  `json:"subject_id"`
	Method     string  `json:"method"`
	From       *string `json:"from_status"`
	To         string  `json:"to_status"`
	WorkflowID *string `json:"workflow_id,omitempty"`
	Reason     *string `json:"reason,omitempty"`
}

// Run is the inspect command. It returns the exit code: 0, 1 for a
// failure, 2 for bad usage.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	project := fs.String("project", "", "project root whose queue to show")
	db := fs.String("db", "", "queue database file (default: from the project root and "+config.EnvDBPath+")")
	asJSON := fs.Bool("json", false, "print one JSON document instead of tables")
	auditN := fs.Int("audit", 20, "how many audit rows to show, newest last (0 for none)")
	entry := fs.String("entry", "", "show only this entry's audit trail")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || (*project == "" && *db == "") || *auditN < 0 {
		fmt.Fprintln(stderr, "usage: animus-queue-sqlite inspect --project DIR [--db FILE] [--json] [--audit N] [--entry ID]")
		return 2
	}
	path, err := resolve(*project, *db, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "inspect: %v\n", err)
		return 2
	}
	rep, err := read(ctx, path, *auditN, *entry)
	if err != nil {
		fmt.Fprintf(stderr, "inspect: %v\n", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = writeTables(stdout, rep, *entry)
	}
	if err != nil {
		fmt.Fprintf(stderr, "inspect: %v\n", err)
		return 1
	}
	return 0
}

// resolve finds the database the serving plugin would use for the project.
func resolve(project, db string, getenv func(string) string) (string, error) {
	if db != "" {
		return filepath.Abs(db)
	}
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return "", err
	}
	root, err := filepath.Abs(project)
	if err != nil {
		return "", err
	}
	return cfg.ResolveDB(root), nil
}

func read(ctx context.Context, path string, auditN int, entry string) (*Report, error) {
	// Opening would create a missing file; an operator's typo should not.
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no queue database at %s (the plugin creates it on the first queue call)", path)
		}
		return nil, err
	}
	st, err := sqlitestore.Open(ctx, sqlitestore.Options{Path: path, BusyTimeout: config.DefaultBusyTimeout})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer st.Close()
	rep := &Report{Database: path, Entries: []wire.Entry{}, Audit: []AuditRow{}}
	err = st.View(ctx, func(r storage.Store) error {
		counts, err := r.Counts(ctx, time.Now().UnixNano())
		if err != nil {
			return err
		}
		rep.Stats = queue.WireStats(counts)
		entries, _, err := r.List(ctx, nil, nil, 0)
		if err != nil {
			return err
		}
		for _, e := range entries {
			rep.Entries = append(rep.Entries, queue.WireEntry(e))
		}
		if auditN == 0 {
			return nil
		}
		trail, err := r.AuditTrail(ctx, entry, auditN)
		for _, a := range trail {
			rep.Audit = append(rep.Audit, AuditRow{
				Seq: a.Seq, At: a.At, EntryID: a.EntryID, SubjectID: a.SubjectKey, Method: a.Method,
				From: a.From, To: a.To, WorkflowID: a.WorkflowID, Reason: a.Reason,
			})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

func writeTables(w io.Writer, rep *Report, entry string) error {
	s := rep.Stats
	fmt.Fprintf(w, "queue %s\n", rep.Database)
	fmt.Fprintf(w, "total %d: pending %d (deferred %d), assigned %d, held %d\n\n", s.Total, s.Pending, s.Deferred, s.Assigned, s.Held)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POS\tENTRY\tSTATUS\tSUBJECT\tWORKFLOW\tWORKFLOW_ID\tENQUEUED\tRUN_AT")
	for i, e := range rep.Entries {
		ref := ""
		var d struct {
			WorkflowRef string `json:"workflow_ref"`
		}
		if json.Unmarshal(e.SubjectDispatch, &d) == nil {
			ref = d.WorkflowRef
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, e.EntryID, e.Status, e.SubjectID, dash(ref),
			dashp(e.WorkflowID), e.EnqueuedAt, dashp(e.RunAt))
	}
	if len(rep.Entries) == 0 {
		fmt.Fprintln(tw, "(empty)")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rep.Audit) == 0 {
		return nil
	}
	scope := "all entries"
	if entry != "" {
		scope = "entry " + entry
	}
	fmt.Fprintf(w, "\naudit trail (%s, last %d, oldest first)\n", scope, len(rep.Audit))
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AT\tENTRY\tSUBJECT\tMETHOD\tTRANSITION\tWORKFLOW_ID\tREASON")
	for _, a := range rep.Audit {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s → %s\t%s\t%s\n", a.At, a.EntryID, a.SubjectID, a.Method,
			dashp(a.From), a.To, dashp(a.WorkflowID), dashp(a.Reason))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func dashp(s *string) string {
	if s == nil {
		return "-"
	}
	return dash(*s)
}
