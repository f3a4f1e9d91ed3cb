// Command animus-demo runs the narrated end-to-end demo (`make demo`):
// every built plugin, driven through the fake host as the Animus daemon
// drives it, with every frame printed.
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

	"github.com/animus-plugins/animus-plugins/e2e/demo"
)

func main() {
	bin := flag.String("bin", "bin", "directory holding the built plugin binaries")
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
	if err := demo.RunAll(ctx, abs, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "animus-demo:", err)
		os.Exit(1)
	}
}
