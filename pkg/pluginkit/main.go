package pluginkit

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"sort"
	"syscall"
)

// Main is a plugin binary's whole main: it handles the command line, then
// serves the protocol on stdin/stdout until the host lets go. It returns
// the process exit code.
//
//	--manifest, -m   print the PluginManifest as one line and exit 0
//	--version        print "<name> <version>"
//	--help, -h       usage on stderr
//	<command> …      a Plugin.Commands mode (for operators)
//	(no arguments)   serve; a terminal on stdin gets a hint and exit 2
func Main(p Plugin) int {
	// Before the arguments, so --manifest and initialize agree on the
	// capability list under the same environment.
	p.enableHarness(os.Getenv(HarnessEnv))
	if code, done := p.handleArgs(os.Args[1:], os.Stdout, os.Stderr); done {
		return code
	}
	if isTerminal(os.Stdin) {
		fmt.Fprintf(os.Stderr, "%s is an Animus plugin and speaks JSON-RPC on stdin; install it with `animus plugin install --path <binary>`, or see --help\n", p.Name)
		return 2
	}
	if n := p.maxProcs(os.Getenv); n > 0 {
		runtime.GOMAXPROCS(n)
	}
	// A Serial plugin's one P, or the environment's GOMAXPROCS, is fixed.
	p.procs = newProcs(p.Serial || os.Getenv("GOMAXPROCS") != "")
	p.redact = newRedactor(p.envVars(), p.Secrets)
	if p.Logger == nil {
		p.Logger = newLogger(os.Stderr, p.redact)
	}
	// From here on nothing but frames may reach the host's stdout: the
	// protocol gets a private copy of fd 1, and fd 1 itself now points at
	// stderr, so a stray print (ours, a library's, or C code's) lands in
	// the log instead of corrupting the stream.
	in, out, err := reserveStdio()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: cannot reserve stdout: %v\n", p.Name, err)
		return 1
	}
	// A host that closes our stderr must not kill us with SIGPIPE.
	signal.Ignore(syscall.SIGPIPE)
	ctx, installed, stop := notifyTerm()
	defer stop()
	p.signalsInstalled = installed

	if p.Preflight != nil {
		if err := p.Preflight(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", p.Name, err)
			return 1
		}
	}
	if err := Serve(ctx, p, in, out); err != nil {
		p.Logger.Error("serve failed", "error", err)
		return 1
	}
	return 0
}

// maxProcs is the GOMAXPROCS Main sets, 0 for Go's default. A Serial
// plugin gets one P unless the environment names a value: one handler at a
// time needs no second thread, and with more Ps every hand-off (reader →
// worker, a cgo call's return) woke one through a futex, a measurable part
// of each call on a VM (durable-sqlite's begin+commit pairs/s against raw
// SQLite went from 0.75 to 0.79–0.82). A cgo call or a blocking syscall
// still lets the reader run: the runtime hands the P over while it waits.
func (p *Plugin) maxProcs(getenv func(string) string) int {
	if p.Serial && getenv("GOMAXPROCS") == "" {
		return 1
	}
	return 0
}

// handleArgs runs the non-serving modes. It reports done=false when the
// plugin should serve.
func (p *Plugin) handleArgs(args []string, stdout, stderr io.Writer) (code int, done bool) {
	if len(args) == 0 {
		return 0, false
	}
	switch args[0] {
	case "--manifest", "-m":
		if err := p.writeManifest(stdout); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", p.Name, err)
			return 1, true
		}
		return 0, true
	case "--version":
		fmt.Fprintf(stdout, "%s %s (protocol %s)\n", p.Name, p.version(), ProtocolVersion)
		return 0, true
	case "--help", "-h", "help":
		p.usage(stderr)
		return 0, true
	}
	if cmd, ok := p.Commands[args[0]]; ok {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		return cmd.Run(ctx, args[1:]), true
	}
	fmt.Fprintf(stderr, "%s: unknown argument %q\n", p.Name, args[0])
	p.usage(stderr)
	return 2, true
}

func (p *Plugin) usage(w io.Writer) {
	fmt.Fprintf(w, "%s %s: %s\n\n", p.Name, p.version(), p.Description)
	fmt.Fprintf(w, "An Animus %s plugin. Animus starts it with no arguments and speaks JSON-RPC\n", p.Kind)
	fmt.Fprintf(w, "(protocol %s) on stdin/stdout; logs go to stderr as JSON.\n\n", ProtocolVersion)
	fmt.Fprintf(w, "Usage:\n  %s              serve (started by Animus)\n", p.Name)
	fmt.Fprintf(w, "  %s --manifest   print the plugin manifest (JSON, one line)\n", p.Name)
	fmt.Fprintf(w, "  %s --version    print the version\n", p.Name)
	names := make([]string, 0, len(p.Commands))
	for name := range p.Commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %s %s  %s\n", p.Name, name, p.Commands[name].Summary)
	}
	fmt.Fprintf(w, "\nEnvironment (declared in env_required, forwarded by Animus):\n")
	for _, e := range p.envVars() {
		fmt.Fprintf(w, "  %-28s %s\n", e.Name, e.Description)
	}
}

// notifyTerm is signal.NotifyContext(SIGTERM, interrupt) with the
// installing moved off the caller's goroutine: the runtime enables a
// notified signal by starting a thread of its own and waiting for it,
// ~0.1 ms that a per-call process would otherwise spend before reading its
// first frame. installed is closed once the handler is in place; the
// server waits for it before the plugin's Init runs (and so before any
// initialize reply), so from the host's side SIGTERM drains exactly as
// before. stop cancels ctx. It leaves the handler registered: Main's
// process exits right after, and unregistering costs a round trip with the
// runtime's signal thread per signal (~0.1 ms of every per-call process's
// exit); a SIGTERM arriving meanwhile lands in a buffered channel nobody
// reads, and the process exits as it was about to.
func notifyTerm() (ctx context.Context, installed <-chan struct{}, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 1)
	done := make(chan struct{})
	go func() {
		signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
		close(done)
		select {
		case <-sig:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, done, func() {
		<-done
		cancel()
	}
}

func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
