package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/notifier"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/store"
)

// Env is what the commands read from the process.
type Env struct {
	Getenv func(string) string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// DefaultEnv is the real process.
func DefaultEnv() Env {
	return Env{Getenv: os.Getenv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// commonFlags are --project and --db.
type commonFlags struct {
	project, db string
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.project, "project", "", "project root (default: the working directory)")
	fs.StringVar(&c.db, "db", "", "outbox database (default: $ANIMUS_NOTIFIER_DB_PATH or <project>/.animus/notifier.sqlite)")
}

// resolve returns the absolute project root and the database path.
func (c *commonFlags) resolve(getenv func(string) string) (string, string, error) {
	project := c.project
	if project == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", "", err
		}
		project = wd
	}
	abs, err := filepath.Abs(project)
	if err != nil {
		return "", "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	db := c.db
	if db == "" {
		db = notifier.DBPath(getenv, abs)
	}
	return abs, db, nil
}

// DeadLetters is the deadletters mode. Exit codes: 0 done, 1 failed,
// 2 usage.
func DeadLetters(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("deadletters", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var common commonFlags
	common.register(fs)
	var replay multiFlag
	fs.Var(&replay, "replay", "replay the dead letter with this delivery_id (repeatable)")
	all := fs.Bool("all", false, "replay every dead letter")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	limit := fs.Int("limit", 100, "list at most this many dead letters")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || (*all && len(replay) > 0) {
		fmt.Fprintln(env.Stderr, "deadletters: give --replay ID (repeatable) or --all, and no other arguments")
		return 2
	}
	_, dbPath, err := common.resolve(env.Getenv)
	if err != nil {
		fmt.Fprintln(env.Stderr, "deadletters:", err)
		return 1
	}
	st, err := openExisting(ctx, dbPath)
	if err != nil {
		fmt.Fprintln(env.Stderr, "deadletters:", err)
		return 1
	}
	defer st.Close()
	if *all || len(replay) > 0 {
		replayed, notFound, err := st.Replay(ctx, "", replay, *all)
		if err != nil {
			fmt.Fprintln(env.Stderr, "deadletters:", err)
			return 1
		}
		fmt.Fprintf(env.Stdout, "replayed %d dead letter(s); they go out on the plugin's next flush\n", len(replayed))
		if len(notFound) > 0 {
			fmt.Fprintf(env.Stderr, "not dead letters: %s\n", strings.Join(notFound, ", "))
			return 1
		}
		return 0
	}
	rows, total, err := st.ListDead(ctx, "", *limit)
	if err != nil {
		fmt.Fprintln(env.Stderr, "deadletters:", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return exitOf(enc.Encode(listJSON(rows, total)), env)
	}
	tw := tabwriter.NewWriter(env.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DELIVERY_ID\tEVENT_TYPE\tCONNECTOR\tATTEMPTS\tFAILED_AT\tLAST_ERROR")
	for _, d := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", d.DeliveryID, d.EventType, d.ConnectorID, d.Attempts,
			d.DeadAt.UTC().Format(time.RFC3339), d.LastError)
	}
	tw.Flush()
	fmt.Fprintf(env.Stdout, "%d dead letter(s)\n", total)
	return 0
}

func listJSON(rows []*store.Delivery, total int) notifier.DeadLettersResult {
	out := notifier.DeadLettersResult{DeadLetters: []notifier.DeadLetter{}, Total: total}
	for _, d := range rows {
		out.DeadLetters = append(out.DeadLetters, notifier.DeadLetterOf(d))
	}
	return out
}

// openExisting opens an outbox that must already exist: an operator who
// mistypes --project should hear so, not get an empty new database.
func openExisting(ctx context.Context, path string) (*store.Store, error) {
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no outbox at %s (check --project or --db)", path)
		}
		return nil, err
	}
	return store.Open(ctx, store.Options{Path: path})
}

func exitOf(err error, env Env) int {
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return 1
	}
	return 0
}
