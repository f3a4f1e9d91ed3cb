// Command animus-demo runs the narrated demo (`make demo`): first the
// end-to-end story, one realistic flow through all seven plugins, then
// every built plugin's own session, each driven through the fake host as
// the Animus daemon drives it, with its frames printed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/animus-plugins/animus-plugins/tools/demo"
)

func main() {
	bin := flag.String("bin", "bin", "directory holding the built plugin binaries")
	story := flag.Bool("story", true, "run the end-to-end story across all seven plugins")
	sessions := flag.Bool("sessions", true, "run each plugin's own narrated session after the story")
	flag.Parse()
	abs, err := filepath.Abs(*bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := demo.Run(ctx, abs, os.Stdout, demo.Options{Story: *story, Sessions: *sessions}); err != nil {
		fmt.Fprintln(os.Stderr, "animus-demo:", err)
		os.Exit(1)
	}
}
