// Command animus-compat regenerates the compatibility matrix from the
// built binaries (see package tools/compat):
//
//	animus-compat [--bin DIR] [--out FILE] [-v]
//
// It exits 1 when a binary could not be probed or run (the matrix is
// still written, saying so), 2 on usage or set-up errors. A missing binary
// is reported in the matrix and on stderr but is not an error.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
	"github.com/animus-plugins/animus-plugins/tools/compat"
)

func main() { os.Exit(run()) }

func run() int {
	fs := flag.NewFlagSet("animus-compat", flag.ContinueOnError)
	bin := fs.String("bin", "bin", "directory holding the built animus-<dir> binaries")
	out := fs.String("out", "-", "file to write the Markdown to (- for stdout)")
	verbose := fs.Bool("v", false, "print each conformance scenario as it finishes")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: animus-compat [--bin DIR] [--out FILE] [-v]")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	schemas, err := schemacheck.Default()
	if err != nil {
		fmt.Fprintf(os.Stderr, "animus-compat: schemas: %v (set ANIMUS_SHARED_DIR to the shared/ folder)\n", err)
		return 2
	}
	var log io.Writer = io.Discard
	if *verbose {
		log = os.Stderr
	}
	m, err := compat.Generate(ctx, compat.Options{BinDir: *bin, Schemas: schemas, Log: progress{log}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "animus-compat: %v\n", err)
		return 2
	}
	var buf bytes.Buffer
	if err := compat.Render(&buf, m); err != nil {
		fmt.Fprintf(os.Stderr, "animus-compat: %v\n", err)
		return 2
	}
	if *out == "-" {
		_, err = os.Stdout.Write(buf.Bytes())
	} else {
		err = os.WriteFile(*out, buf.Bytes(), 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "animus-compat: %v\n", err)
		return 2
	}
	for _, r := range m.Rows {
		switch {
		case r.Missing != "":
			fmt.Fprintf(os.Stderr, "animus-compat: %s: %s\n", r.Plugin.Binary(), r.Missing)
		case r.Error != "":
			fmt.Fprintf(os.Stderr, "animus-compat: %s: %s\n", r.Plugin.Binary(), r.Error)
		}
		for _, lr := range r.Runs {
			if c := lr.Conformance; c != nil && c.Failed > 0 {
				fmt.Fprintf(os.Stderr, "animus-compat: %s: %d conformance scenarios failed as the %s daemon\n", r.Plugin.Binary(), c.Failed, lr.Daemon)
			}
		}
	}
	if m.Failed() {
		return 1
	}
	return 0
}

// progress passes the "compat: <binary>" lines through even without -v,
// so a long run shows where it is; scenario lines only with -v.
type progress struct{ verbose io.Writer }

func (p progress) Write(b []byte) (int, error) {
	if bytes.HasPrefix(b, []byte("compat: ")) {
		return os.Stderr.Write(b)
	}
	return p.verbose.Write(b)
}
