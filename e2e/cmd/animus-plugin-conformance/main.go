// Command animus-plugin-conformance runs the conformance scenarios against
// any Animus plugin binary:
//
//	animus-plugin-conformance [--kind K] [--daemon 0.6|0.7] [--run SUBSTR] [--report-json F] [-v] /abs/path/to/plugin
//
// --daemon picks the Animus daemon line whose handshakes every scenario
// sends (fakehost.Daemon06, fakehost.Daemon07); without it the fake host
// sends its presets' own values.
//
// It prints PASS/FAIL/SKIP per scenario and exits 0 when nothing failed, 1
// when a scenario failed, 2 when the plugin could not even be probed and
// handshaken (as the official harness does).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

func main() { os.Exit(run()) }

func run() int {
	fs := flag.NewFlagSet("animus-plugin-conformance", flag.ContinueOnError)
	kind := fs.String("kind", "", "suite kind: subject, trigger, transport, log-storage, queue, queue-v2, durable, notifier, custom (default: the manifest's plugin_kind; a queue passing the Animus 0.7 gate also gets queue-v2)")
	filter := fs.String("run", "", "run only scenarios whose id contains this")
	report := fs.String("report-json", "", "write a JSON report here")
	verbose := fs.Bool("v", false, "print the wire log and stderr of failing scenarios")
	timeout := fs.Duration("timeout", 30*time.Second, "per-scenario timeout")
	daemonLine := fs.String("daemon", "", "daemon line whose handshakes to send: 0.6 or 0.7 (default: the fake host's presets)")
	var env envFlag
	fs.Var(&env, "env", "NAME=VALUE for the plugin's environment (repeatable; only env_required names reach it)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: animus-plugin-conformance [flags] /path/to/plugin\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	daemon, err := fakehost.ParseDaemon(*daemonLine)
	if err != nil {
		fmt.Fprintf(os.Stderr, "conformance: --daemon: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	schemas, err := schemacheck.Default()
	if err != nil {
		fmt.Fprintf(os.Stderr, "conformance: schemas: %v (set ANIMUS_SHARED_DIR to the shared/ folder)\n", err)
		return 2
	}
	target, err := conformance.Prepare(ctx, fs.Arg(0), *kind, schemas, env.m)
	if err != nil {
		fmt.Fprintf(os.Stderr, "conformance: %v\n", err)
		return 2
	}
	fmt.Printf("plugin %s %s (%s) — suite %s, daemon %s\n", target.Manifest.Name, target.Manifest.Version, target.Manifest.PluginKind, target.Kind, daemon)
	rep := conformance.RunAll(ctx, target, conformance.ScenariosFor(target), conformance.Options{
		Filter: *filter, Timeout: *timeout, Out: os.Stdout, Verbose: *verbose, Daemon: daemon,
	})
	fmt.Println(rep.Summary())
	if *report != "" {
		if err := rep.WriteJSON(*report); err != nil {
			fmt.Fprintf(os.Stderr, "conformance: %v\n", err)
			return 2
		}
	}
	switch {
	case len(rep.Results) == 0:
		fmt.Fprintln(os.Stderr, "conformance: no scenario ran")
		return 2
	case rep.Failed > 0:
		return 1
	}
	return 0
}

type envFlag struct{ m map[string]string }

func (e *envFlag) String() string { return "" }

func (e *envFlag) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", v)
	}
	if e.m == nil {
		e.m = map[string]string{}
	}
	e.m[name] = value
	return nil
}
