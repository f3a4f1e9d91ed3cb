// Command fakeloki serves e2e/fakeloki (an in-memory subset of Grafana
// Loki's HTTP API) on a fixed address, so operators and the conformance
// runner can point LOKI_URL at it without a real Loki:
//
//	go run ./e2e/cmd/fakeloki -addr 127.0.0.1:3100 -require-tenant &
//	LOKI_URL=http://127.0.0.1:3100 LOKI_TENANT_ID=animus \
//	    animus-plugin-conformance --kind log-storage --plugin bin/animus-logs-loki
//
// Once listening it prints one line, LOKI_URL=<base URL>, on stdout (so a
// script can `eval` it or wait for it; -addr 127.0.0.1:0 picks a free
// port), then serves until SIGINT or SIGTERM and exits 0. Gateway
// credentials come from the environment, never from flags (which every
// user can read in ps): FAKELOKI_PASSWORD with -user, FAKELOKI_BEARER_TOKEN.
// Data lives in memory and is gone when the process ends.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "fakeloki:", err)
		os.Exit(2)
	}
}

// run parses args, starts the fake and blocks until a signal. It is split
// from main so the flag set is built per call (no package-level flags).
func run(args []string, stdout io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("fakeloki", flag.ContinueOnError)
	var o fakeloki.Options
	fs.StringVar(&o.Addr, "addr", "127.0.0.1:3100", "listen address (host:port; port 0 picks a free one)")
	fs.BoolVar(&o.RequireTenant, "require-tenant", false, "answer 401 \"no org id\" without X-Scope-OrgID (Loki with auth_enabled: true)")
	fs.StringVar(&o.BasicAuthUser, "user", "", "require basic auth with this user and $FAKELOKI_PASSWORD (as a gateway would)")
	fs.BoolVar(&o.OrderedWrites, "ordered-writes", false, "reject entries older than their stream's newest (unordered_writes: false)")
	fs.DurationVar(&o.OutOfOrderWindow, "out-of-order-window", 0, "unordered writes: reject entries this much older than the stream's newest (default 1h)")
	fs.DurationVar(&o.RejectOldSamplesMaxAge, "reject-old-samples-max-age", 0, "reject entries older than now minus this (default 168h)")
	fs.DurationVar(&o.CreationGracePeriod, "creation-grace-period", 0, "reject entries newer than now plus this (default 10m)")
	fs.IntVar(&o.MaxLineSize, "max-line-size", 0, "max_line_size in bytes (default 262144)")
	fs.IntVar(&o.MaxLabelNames, "max-label-names", 0, "max_label_names_per_series (default 15)")
	fs.IntVar(&o.MaxEntriesLimitPerQuery, "max-entries-limit-per-query", 0, "largest query limit accepted (default 5000)")
	fs.DurationVar(&o.MaxQueryLength, "max-query-length", 0, "longest query_range window accepted (default 721h)")
	fs.BoolVar(&o.DisableServiceNameDiscovery, "disable-service-name-discovery", false, "do not add Loki 3's service_name label to streams without one")
	fs.BoolVar(&o.DisallowStructuredMetadata, "disallow-structured-metadata", false, "reject entries carrying structured metadata (allow_structured_metadata: false)")
	lag := fs.Duration("ingestion-lag", 0, "hide accepted entries from query_range this long, as a lagging ingestion path would")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	o.BasicAuthPassword = getenv("FAKELOKI_PASSWORD")
	o.BearerToken = getenv("FAKELOKI_BEARER_TOKEN")
	if (o.BasicAuthUser == "") != (o.BasicAuthPassword == "") {
		return fmt.Errorf("-user and FAKELOKI_PASSWORD go together")
	}

	// Arm the signal handler before announcing the URL: a supervisor that
	// sends SIGTERM right after reading the line must not kill us by the
	// default action.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := fakeloki.Start(o)
	if err != nil {
		return err
	}
	defer s.Close()
	s.SetIngestionLag(*lag)
	if _, err := fmt.Fprintf(stdout, "LOKI_URL=%s\n", s.URL()); err != nil {
		return err
	}
	<-ctx.Done()
	fmt.Fprintf(os.Stderr, "fakeloki: stopping after %d requests (%d pushes)\n", s.Requests(), s.Pushes())
	return nil
}
