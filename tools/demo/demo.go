package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// Script is one plugin's narrated session.
type Script struct {
	Binary string // file name in the bin dir, e.g. "animus-example"
	Kind   string
	Title  string
	Run    func(ctx context.Context, d *Demo) (summary string, err error)
}

// Scripts are the sessions `make demo` runs, in order. Each plugin adds
// its own here.
func Scripts() []Script {
	return []Script{exampleScript(), subjectScript(), queueScript(), durableScript(), notifierScript(), triggerScript(), logsLokiScript(), transportScript()}
}

// product lists every plugin binary the project ships, so the summary can
// say which are not built yet instead of leaving them out.
var product = []struct{ binary, kind string }{
	{"animus-subject-sqlite", "subject_backend"},
	{"animus-queue-sqlite", "queue"},
	{"animus-durable-sqlite", "durable_store"},
	{"animus-notifier-webhook", "notifier"},
	{"animus-trigger-slack", "trigger_backend"},
	{"animus-logs-loki", "log_storage_backend"},
	{"animus-transport-http", "transport_backend"},
}

// Demo is the state one script runs with.
type Demo struct {
	*Narrator
	BinDir  string
	Schemas *schemacheck.Set
	// Daemon is the daemon line every spawned plugin is initialized by
	// (fakehost.Config.Daemon); the zero value keeps the presets' own
	// handshakes, as the per-plugin sessions use.
	Daemon fakehost.Daemon
	hosts  []*fakehost.Host
}

// Spawn starts the plugin as the daemon would: scrubbed environment plus
// env_required, cwd a project root, every frame validated.
func (d *Demo) Spawn(ctx context.Context, binary string, mutate ...func(*fakehost.Config)) (*fakehost.Host, error) {
	cfg := fakehost.Config{Binary: filepath.Join(d.BinDir, binary), EnvMode: fakehost.EnvDaemon, Schemas: d.Schemas, Daemon: d.Daemon}
	for _, m := range mutate {
		m(&cfg)
	}
	h, err := fakehost.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	d.hosts = append(d.hosts, h)
	d.Name(h, strings.TrimPrefix(binary, "animus-"))
	return h, nil
}

// Call sends a request, prints the frames, and returns the response.
func (d *Demo) Call(ctx context.Context, h *fakehost.Host, method string, params any) (*fakehost.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := h.Call(ctx, method, params)
	d.Frames(h)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	return resp, nil
}

// CallInto is Call that also decodes a successful result into out (when
// out is not nil); an error response is returned as an error, with the
// response for callers that narrate it.
func (d *Demo) CallInto(ctx context.Context, h *fakehost.Host, method string, params, out any) (*fakehost.Response, error) {
	resp, err := d.Call(ctx, h, method, params)
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return resp, fmt.Errorf("%s: %s", method, errText(resp))
	}
	if out != nil {
		if err := json.Unmarshal(resp.Result, out); err != nil {
			return resp, fmt.Errorf("%s: decoding %s: %w", method, shortJSON(resp.Result, 200), err)
		}
	}
	return resp, nil
}

// Result is CallInto for callers that need only the outcome.
func (d *Demo) Result(ctx context.Context, h *fakehost.Host, method string, params, out any) error {
	_, err := d.CallInto(ctx, h, method, params, out)
	return err
}

// Expect fails the demo when cond is false, and narrates either way.
func (d *Demo) Expect(cond bool, format string, args ...any) error {
	if !cond {
		d.Bad(format, args...)
		return fmt.Errorf("expectation failed: "+format, args...)
	}
	d.OK(format, args...)
	return nil
}

func (d *Demo) close() error {
	var errs []error
	for _, h := range d.hosts {
		if v := h.Violations(); len(v) > 0 {
			errs = append(errs, fmt.Errorf("wire violations: %s", strings.Join(v, "; ")))
		}
		h.Close()
	}
	d.hosts = nil
	return errors.Join(errs...)
}

// Options select what Run runs.
type Options struct {
	Story bool // the end-to-end story across all seven plugins (RunStory)
	// Daemons are the daemon lines the story runs as, in order; nil runs
	// it once as each line (fakehost.Daemons: 0.6, then 0.7).
	Daemons  []fakehost.Daemon
	Sessions bool // the per-plugin sessions (Scripts)
	// PgHosts runs the scenes "two hosts, one queue" (RunPgHosts) and
	// "two hosts, one task list" (RunPgSubjects) after the story, against
	// PostgreSQL at PgDSN; without a DSN one line says they were skipped
	// and why.
	PgHosts bool
	PgDSN   string
}

// RunAll is `make demo`: the story as each daemon line, the two-hosts
// scenes when $ANIMUS_PG_TEST_DSN names a PostgreSQL, then every plugin's
// session.
func RunAll(ctx context.Context, binDir string, w io.Writer) error {
	return Run(ctx, binDir, w, Options{Story: true, Sessions: true, PgHosts: true, PgDSN: PgHostsDSN()})
}

// Run runs what o selects against the binaries in binDir. It returns an
// error if anything failed; a failed story does not stop the next line's
// run nor the sessions.
func Run(ctx context.Context, binDir string, w io.Writer, o Options) error {
	var errs []error
	if o.Story {
		daemons := o.Daemons
		if len(daemons) == 0 {
			daemons = fakehost.Daemons()
		}
		for _, line := range daemons {
			if _, err := RunStory(ctx, binDir, w, line); err != nil {
				errs = append(errs, fmt.Errorf("story as the %s daemon: %w", line, err))
			}
		}
	}
	if o.PgHosts {
		if o.PgDSN == "" {
			PgHostsSkipped(w)
		} else {
			if _, err := RunPgHosts(ctx, binDir, w, PgHostsOptions{DSN: o.PgDSN}); err != nil {
				errs = append(errs, err)
			}
			if _, err := RunPgSubjects(ctx, binDir, w, PgHostsOptions{DSN: o.PgDSN}); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if o.Sessions {
		if err := runSessions(ctx, binDir, w); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// runSessions runs every script whose binary is in binDir and prints a
// summary table. It returns an error if any script failed.
func runSessions(ctx context.Context, binDir string, w io.Writer) error {
	schemas, err := schemacheck.Default()
	if err != nil {
		return fmt.Errorf("schemas: %w", err)
	}
	n := NewNarrator(w)
	type row struct{ binary, kind, status, summary string }
	var rows []row
	failed := false
	ran := map[string]bool{}
	for _, sc := range Scripts() {
		ran[sc.Binary] = true
		if _, err := os.Stat(filepath.Join(binDir, sc.Binary)); err != nil {
			rows = append(rows, row{sc.Binary, sc.Kind, "NOT BUILT", "run make build"})
			failed = true
			continue
		}
		n.Title(sc.Title)
		d := &Demo{Narrator: n, BinDir: binDir, Schemas: schemas}
		start := time.Now()
		summary, err := sc.Run(ctx, d)
		if cerr := d.close(); err == nil {
			err = cerr
		}
		status := fmt.Sprintf("ok (%v)", time.Since(start).Round(time.Millisecond))
		if err != nil {
			status, summary, failed = "FAILED", err.Error(), true
			n.Bad("%v", err)
		}
		rows = append(rows, row{sc.Binary, sc.Kind, status, summary})
	}
	for _, p := range product {
		if !ran[p.binary] {
			rows = append(rows, row{p.binary, p.kind, "not yet implemented", "see its open issue"})
		}
	}
	n.Title("Summary")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PLUGIN\tKIND\tRESULT\tWHAT IT DID")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.binary, r.kind, r.status, r.summary)
	}
	tw.Flush()
	if failed {
		return errors.New("demo failed")
	}
	return nil
}
