// Command animus-demo runs the narrated demo (`make demo`): first the
// end-to-end story, one realistic flow through all seven plugins, once as
// an Animus 0.6 daemon and once as a 0.7 daemon (whose queue steps go
// through queue/v2), then, when PostgreSQL is at hand ($ANIMUS_PG_TEST_DSN
// or --pg-dsn), the scenes "two hosts, one queue" (two 0.7 daemons sharing
// animus-queue-postgres) and "two hosts, one task list" (sharing
// animus-subject-postgres, with a live watch across them), then every built plugin's own session, each
// driven through the fake host as the Animus daemon drives it, with its
// frames printed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/tools/demo"
)

func main() {
	bin := flag.String("bin", "bin", "directory holding the built plugin binaries")
	story := flag.Bool("story", true, "run the end-to-end story across all seven plugins")
	daemon := flag.String("daemon", "", "run the story only as this daemon line (0.6 or 0.7); default: as each, in turn")
	sessions := flag.Bool("sessions", true, "run each plugin's own narrated session after the story")
	pgDSN := flag.String("pg-dsn", "", "PostgreSQL for the scenes \"two hosts, one queue\" and \"two hosts, one task list\" (animus-queue-postgres, animus-subject-postgres), run after the story (default $"+demo.EnvPgDSN+"; without either the scenes are skipped)")
	flag.Parse()
	if strings.TrimSpace(*pgDSN) == "" {
		*pgDSN = demo.PgHostsDSN() // not the flag's default: -h must not print a DSN
	}
	var daemons []fakehost.Daemon
	pgHosts := *story // the scene is a 0.7 daemon's: it runs with the story unless -daemon 0.6
	if *daemon != "" {
		line, err := fakehost.ParseDaemon(*daemon)
		if err != nil {
			fmt.Fprintln(os.Stderr, "animus-demo:", err)
			os.Exit(2)
		}
		daemons = append(daemons, line)
		pgHosts = pgHosts && line == fakehost.Daemon07
	}
	abs, err := filepath.Abs(*bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	if err := demo.Run(ctx, abs, os.Stdout, demo.Options{Story: *story, Daemons: daemons, Sessions: *sessions, PgHosts: pgHosts, PgDSN: strings.TrimSpace(*pgDSN)}); err != nil {
		fmt.Fprintln(os.Stderr, "animus-demo:", err)
		os.Exit(1)
	}
}
