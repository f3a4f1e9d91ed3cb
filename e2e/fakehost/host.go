package fakehost

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/internal/waitcond"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// Config describes one plugin process.
type Config struct {
	// Binary is the plugin executable (made absolute if relative).
	Binary string
	// Dir is the cwd and the project root; empty means a fresh temp dir that
	// Close removes (the testkit's layout; the daemon uses the project root).
	Dir string
	// EnvMode selects the daemon's scrubbed environment or the testkit's
	// inherited one.
	EnvMode EnvMode
	// Env overlays os.Environ() to form the daemon's environment; in the
	// daemon modes only allowlisted and declared names reach the plugin.
	Env map[string]string
	// Extra is always passed (the notifier dispatcher's *_env names).
	Extra map[string]string
	// Declared lists env_required names; nil makes Start learn them with a
	// manifest probe first, as discovery does before any spawn.
	Declared []string
	// LineMode uses the old host's strict line-by-line reader.
	LineMode bool
	// Schemas, if set, validates every frame, every result of a known
	// method and every known notification; failures become violations.
	Schemas *schemacheck.Set
	// Args are passed to the binary; the daemon passes none.
	Args []string
	// Daemon is the daemon line spawning the plugin: Initialize sends its
	// callers' handshakes unless Handshake.Daemon names another. The zero
	// value keeps the presets' own values.
	Daemon Daemon
}

// Host is one spawned plugin process and the host side of its connection.
type Host struct {
	cfg    Config
	dir    string // cwd
	root   string // canonical project root, sent in project_binding
	tmpDir string // created by Start, removed by Close
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	stderr *os.File

	wmu         sync.Mutex // one frame per write, never interleaved
	stdinClosed bool       // guarded by wmu

	mu             sync.Mutex
	changed        *waitcond.Cond // wakes waiters on every state change
	nextID         int64
	sent           map[string]string // compact request id → method
	responses      map[string]*Response
	notifications  []Notification
	violations     []string
	wire           []string
	initID         string // compact id of the first initialize request
	initReplied    bool
	captureFirstID bool      // testkit handshake in progress
	firstIDFrame   *Response // what the testkit would take as the reply
	dead           bool      // exit sent: later requests fail at once
	lost           error     // stdout closed or reader gave up
	stderrBuf      bytes.Buffer
	stderrTrunc    bool

	readerDone chan struct{}
	stderrDone chan struct{}
	exited     chan struct{}
	exitCode   int
	exitAt     time.Time
	closeOnce  sync.Once
}

// stderrCap bounds the captured stderr; the drain keeps reading past it so
// the plugin never blocks on a full pipe.
const stderrCap = 4 << 20

// Start spawns the plugin and starts the stdout reader and the stderr drain.
// No handshake is sent. ctx bounds only the preliminary manifest probe (when
// Declared is nil); the process lives until Shutdown, Kill or Close.
func Start(ctx context.Context, cfg Config) (*Host, error) {
	if cfg.Binary == "" {
		return nil, errors.New("fakehost: Config.Binary is empty")
	}
	bin, err := filepath.Abs(cfg.Binary)
	if err != nil {
		return nil, err
	}
	cfg.Binary = bin
	h := &Host{
		cfg:        cfg,
		sent:       map[string]string{},
		responses:  map[string]*Response{},
		readerDone: make(chan struct{}),
		stderrDone: make(chan struct{}),
		exited:     make(chan struct{}),
	}
	h.changed = waitcond.New(&h.mu)
	if h.dir = cfg.Dir; h.dir == "" {
		if h.tmpDir, err = os.MkdirTemp("", "fakehost-project-*"); err != nil {
			return nil, err
		}
		h.dir = h.tmpDir
	}
	if err := h.spawn(ctx); err != nil {
		if h.tmpDir != "" {
			os.RemoveAll(h.tmpDir)
		}
		return nil, err
	}
	return h, nil
}

func (h *Host) spawn(ctx context.Context) error {
	cfg := h.cfg
	abs, err := filepath.Abs(h.dir)
	if err != nil {
		return err
	}
	if h.root, err = filepath.EvalSymlinks(abs); err != nil {
		return fmt.Errorf("fakehost: project root: %w", err)
	}
	declared := cfg.Declared
	if declared == nil && cfg.EnvMode != EnvInherit {
		m, err := Probe(ctx, cfg.Binary, ProbeOptions{Allowlist: cfg.EnvMode.allowlist(), Env: cfg.Env, Dir: h.dir})
		if err != nil {
			return fmt.Errorf("fakehost: learning env_required: %w", err)
		}
		declared = m.EnvNames()
	}

	// Plain os.Pipe files instead of cmd.StdoutPipe: exec then copies
	// nothing itself, so cmd.Wait reaps the process without waiting for our
	// readers, and stdin writes can carry a deadline like the daemon's.
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW)
		return err
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW, stdoutR, stdoutW)
		return err
	}
	cmd := exec.Command(cfg.Binary, cfg.Args...)
	cmd.Dir = h.dir
	cmd.Env = spawnEnv(cfg.EnvMode, cfg.Env, declared, cfg.Extra)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	if err := cmd.Start(); err != nil {
		closeAll(stdinR, stdinW, stdoutR, stdoutW, stderrR, stderrW)
		return fmt.Errorf("fakehost: spawn: %w", err)
	}
	// The child holds its own copies; ours must go so EOF can be seen.
	closeAll(stdinR, stdoutW, stderrW)
	h.cmd, h.stdin, h.stdout, h.stderr = cmd, stdinW, stdoutR, stderrR

	go h.waitLoop()
	go h.readLoop()
	go h.drainStderr()
	return nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// New is Start for tests: it fails t on a start error and registers a
// cleanup that kills and reaps the process, prints the wire log and stderr if
// the test failed, and fails the test on any recorded violation. Tests that
// provoke violations on purpose use Start and Close instead.
func New(t testing.TB, cfg Config) *Host {
	t.Helper()
	h, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("fakehost: %v", err)
	}
	t.Cleanup(func() {
		h.Close()
		if v := h.Violations(); len(v) > 0 {
			t.Errorf("fakehost: %d protocol violation(s):\n  %s", len(v), strings.Join(v, "\n  "))
		}
		if t.Failed() {
			t.Logf("fakehost wire log:\n%s", h.WireLog())
			t.Logf("fakehost plugin stderr:\n%s", h.Stderr())
		}
	})
	return h
}

func (h *Host) waitLoop() {
	h.cmd.Wait()
	h.mu.Lock()
	h.exitCode = h.cmd.ProcessState.ExitCode() // -1 when killed by a signal
	h.exitAt = time.Now()
	h.mu.Unlock()
	close(h.exited)
	h.broadcast()
}

func (h *Host) readLoop() {
	defer close(h.readerDone)
	var sp splitter = &streamSplitter{}
	if h.cfg.LineMode {
		sp = &lineSplitter{}
	}
	buf := make([]byte, 64<<10)
	for {
		n, rerr := h.stdout.Read(buf)
		if n > 0 {
			sp.feed(buf[:n])
			for {
				c, ok, err := sp.next()
				if err != nil {
					h.violate("stdout: %v; the daemon tears the host down here", err)
					h.setLost(err)
					h.Kill()
					return
				}
				if !ok {
					break
				}
				if c.frame != nil {
					h.handleFrame(c.frame)
				} else {
					h.handleGarbage(c.garbage)
				}
			}
		}
		if rerr != nil {
			if rest := sp.flush(); len(rest) > 0 {
				h.handleGarbage(rest)
			}
			if errors.Is(rerr, io.EOF) {
				rerr = errors.New("stdout closed")
			}
			h.setLost(rerr)
			return
		}
	}
}

func (h *Host) drainStderr() {
	defer close(h.stderrDone)
	r := bufio.NewReaderSize(h.stderr, 64<<10)
	for {
		line, err := r.ReadString('\n')
		if line != "" {
			h.mu.Lock()
			if h.stderrBuf.Len()+len(line) <= stderrCap {
				h.stderrBuf.WriteString(line)
			} else {
				h.stderrTrunc = true
			}
			h.mu.Unlock()
			h.broadcast()
		}
		if err != nil {
			return
		}
	}
}

// broadcast wakes every waiter; each re-checks its own condition.
func (h *Host) broadcast() { h.changed.Broadcast() }

// waitFor blocks until cond (called with h.mu held) returns true, or ctx ends.
func (h *Host) waitFor(ctx context.Context, cond func() bool) error {
	return h.changed.Wait(ctx, cond)
}

func (h *Host) setLost(err error) {
	h.mu.Lock()
	if h.lost == nil {
		h.lost = err
	}
	h.mu.Unlock()
	h.broadcast()
}

// Pid returns the plugin's process id.
func (h *Host) Pid() int { return h.cmd.Process.Pid }

// Dir returns the plugin's cwd (Config.Dir or the temp dir Start made).
func (h *Host) Dir() string { return h.dir }

// ProjectRoot returns Dir made absolute with symlinks resolved: the canonical
// path the kind-client presets send as project_binding.project_root and hash
// into repo_scope.
func (h *Host) ProjectRoot() string { return h.root }

// Wait waits up to timeout for the process to exit by itself. Once it has,
// the stdout reader and stderr drain get up to 2 s to finish (as in the
// daemon), so Stderr and Notifications are complete afterwards.
func (h *Host) Wait(timeout time.Duration) (exited bool, code int) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-h.exited:
	case <-t.C:
		return false, 0
	}
	h.settle(2 * time.Second)
	h.mu.Lock()
	defer h.mu.Unlock()
	return true, h.exitCode
}

// settle gives the reader and the stderr drain up to d to reach EOF.
func (h *Host) settle(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for _, ch := range []chan struct{}{h.readerDone, h.stderrDone} {
		select {
		case <-ch:
		case <-t.C:
			return
		}
	}
}

// Exited reports whether the process has exited, and its code (-1 = signal).
func (h *Host) Exited() (bool, int) {
	select {
	case <-h.exited:
		h.mu.Lock()
		defer h.mu.Unlock()
		return true, h.exitCode
	default:
		return false, 0
	}
}

// Kill sends SIGKILL (if the process is still running) and reaps it.
func (h *Host) Kill() error {
	select {
	case <-h.exited:
		return nil
	default:
	}
	err := h.cmd.Process.Kill()
	<-h.exited
	if errors.Is(err, os.ErrProcessDone) {
		err = nil
	}
	return err
}

// Close kills and reaps the process, releases the pipes and removes the temp
// project dir Start created. It is idempotent.
func (h *Host) Close() error {
	var err error
	h.closeOnce.Do(func() {
		err = h.Kill()
		h.CloseStdin()
		// A grandchild may still hold stdout/stderr open; closing our ends
		// unblocks the reader and the drain.
		h.settle(2 * time.Second)
		h.stdout.Close()
		h.stderr.Close()
		<-h.readerDone
		<-h.stderrDone
		if h.tmpDir != "" {
			if rerr := os.RemoveAll(h.tmpDir); err == nil {
				err = rerr
			}
		}
	})
	return err
}

// Stderr returns everything the plugin wrote to stderr so far.
func (h *Host) Stderr() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.stderrBuf.String()
	if h.stderrTrunc {
		s += "\n[fakehost: stderr truncated at 4 MiB]\n"
	}
	return s
}

// WaitStderr waits until the captured stderr contains substr.
func (h *Host) WaitStderr(ctx context.Context, substr string) error {
	ctx, cancel := withDefaultTimeout(ctx, 10*time.Second)
	defer cancel()
	err := h.waitFor(ctx, func() bool { return strings.Contains(h.stderrBuf.String(), substr) })
	if err != nil {
		return fmt.Errorf("fakehost: stderr never contained %q: %w", substr, err)
	}
	return nil
}

func withDefaultTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}
