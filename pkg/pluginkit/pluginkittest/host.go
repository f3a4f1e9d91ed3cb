package pluginkittest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// Host is one plugin served in this process.
type Host struct {
	in     *io.PipeWriter
	done   chan struct{}
	nextID int

	mu      sync.Mutex
	changed chan struct{} // closed and replaced whenever something arrives or Serve ends
	frames  []Frame
	byID    map[string]int // compact id → index in frames of its latest response
	code    int
	err     error // what Serve returned
	wire    []string
	logs    bytes.Buffer
}

// Start serves p until the test ends (stdin closed, Serve drained); the
// wire log and the plugin's log are printed if the test failed. A nil
// p.Logger logs at debug level into that report.
//
// The cleanup also fails the test when the plugin does not stop within
// closeWait of stdin closing, or when it wrote a line that is not JSON:
// both break the protocol whatever the test asserted.
func Start(t testing.TB, p pluginkit.Plugin) *Host {
	t.Helper()
	h := serve(p)
	t.Cleanup(func() {
		if !h.Close() {
			t.Errorf("the plugin did not stop within %v of stdin closing", closeWait)
		} else if err := h.Err(); err != nil {
			t.Errorf("Serve returned %v", err)
		}
		for _, f := range h.all() {
			if !json.Valid(f.Raw) {
				t.Errorf("the plugin wrote a line that is not JSON: %q", f.Raw)
			}
		}
		if t.Failed() {
			t.Logf("wire log:\n%s", h.Log())
		}
	})
	return h
}

// closeWait bounds how long Close waits for the plugin to drain: well past
// pluginkit's own shutdown budget.
const closeWait = 5 * time.Second

// serve serves p; Close ends it.
func serve(p pluginkit.Plugin) *Host {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &Host{in: inW, done: make(chan struct{}), changed: make(chan struct{}), byID: map[string]int{}, nextID: 1}
	if p.Logger == nil {
		p.Logger = slog.New(slog.NewJSONHandler(lockedWriter{h}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	served := make(chan error, 1)
	go func() {
		served <- pluginkit.Serve(context.Background(), p, inR, outW)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), pluginkit.MaxFrameBytes+1)
		for sc.Scan() {
			h.received(append([]byte(nil), sc.Bytes()...))
		}
		err := <-served
		h.update(func() {
			if err != nil {
				h.code, h.err = 1, err // 1: what pluginkit.Main would exit with
			}
		})
		inR.Close()
		close(h.done)
	}()
	return h
}

func (h *Host) received(raw []byte) {
	f := Frame{Raw: raw}
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *RPCError       `json:"error"`
	}
	if json.Unmarshal(raw, &env) == nil {
		f.Method, f.Params, f.Result, f.Error = env.Method, env.Params, env.Result, env.Error
		if env.ID != nil {
			f.ID = compact(env.ID)
		}
	}
	h.update(func() {
		h.frames = append(h.frames, f)
		if f.ID != nil && f.Method == "" {
			h.byID[string(f.ID)] = len(h.frames) - 1
		}
		h.wire = append(h.wire, time.Now().Format("15:04:05.000")+" << "+string(raw))
	})
}

func (h *Host) update(fn func()) {
	h.mu.Lock()
	fn()
	close(h.changed)
	h.changed = make(chan struct{})
	h.mu.Unlock()
}

// waitFor waits until cond holds (under the lock), the plugin ends, or ctx
// is done.
func (h *Host) waitFor(ctx context.Context, what string, cond func() bool) error {
	for {
		h.mu.Lock()
		ok, changed := cond(), h.changed
		h.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-h.done:
			h.mu.Lock()
			ok := cond()
			h.mu.Unlock()
			if ok {
				return nil
			}
			return fmt.Errorf("the plugin ended before %s", what)
		case <-ctx.Done():
			return fmt.Errorf("no %s: %w", what, ctx.Err())
		}
	}
}

// Send writes one raw frame (a newline is added if missing).
func (h *Host) Send(frame []byte) error {
	frame = bytes.TrimRight(frame, "\n")
	h.update(func() { h.wire = append(h.wire, time.Now().Format("15:04:05.000")+" >> "+string(frame)) })
	_, err := h.in.Write(append(frame, '\n'))
	return err
}

// NextID returns a fresh integer id, never handed out before by Request
// or NextID. A test that picks its own ids uses others (strings, say).
func (h *Host) NextID() json.RawMessage {
	h.mu.Lock()
	defer h.mu.Unlock()
	id := json.RawMessage(strconv.Itoa(h.nextID))
	h.nextID++
	return id
}

// Request sends a request with the next integer id and returns the id.
// params nil or "" omits the params key; a json.RawMessage, []byte or
// string is sent byte for byte; anything else is marshalled.
func (h *Host) Request(method string, params any) (json.RawMessage, error) {
	id := h.NextID()
	return id, h.RequestID(id, method, params)
}

// RequestID sends a request under the caller's id, exactly as given.
func (h *Host) RequestID(id json.RawMessage, method string, params any) error {
	frame, err := envelope(id, method, params)
	if err != nil {
		return err
	}
	return h.Send(frame)
}

// Notify sends a notification.
func (h *Host) Notify(method string, params any) error {
	frame, err := envelope(nil, method, params)
	if err != nil {
		return err
	}
	return h.Send(frame)
}

// Await returns the latest response to id.
func (h *Host) Await(ctx context.Context, id json.RawMessage) (Frame, error) {
	f, _, err := h.AwaitAt(ctx, id)
	return f, err
}

// AwaitAt is Await, plus the response's index among all frames (to check
// what came before it).
func (h *Host) AwaitAt(ctx context.Context, id json.RawMessage) (Frame, int, error) {
	key := string(compact(id))
	var f Frame
	at := -1
	err := h.waitFor(ctx, "response to id "+key, func() bool {
		i, ok := h.byID[key]
		if ok {
			f, at = h.frames[i], i
		}
		return ok
	})
	return f, at, err
}

// Call sends a request and waits (up to 10 s) for its answer: the result,
// or the error response as an *RPCError.
func (h *Host) Call(method string, params any) (json.RawMessage, error) {
	id, err := h.Request(method, params)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f, err := h.Await(ctx, id)
	switch {
	case err != nil:
		return nil, err
	case f.Error != nil:
		return nil, f.Error
	}
	return f.Result, nil
}

// Handshake is what initialize sends. The zero value is the daemon's
// (protocol 1.1.0, host animus 0.6.33, every capability, no extensions).
type Handshake struct {
	ProtocolVersion string
	HostName        string // default "animus"
	HostVersion     string
	// Capabilities are the host's; nil means streaming, progress and
	// cancellation all true.
	Capabilities *pluginkit.HostCapabilities
	// InitExtensions is init_extensions: nil (or an empty raw value) for
	// none; a json.RawMessage, []byte or string is sent byte for byte;
	// anything else is marshalled.
	InitExtensions any
}

// Initialize performs the daemon's handshake with init_extensions (nil for
// none): initialize, then initialized.
func (h *Host) Initialize(initExtensions any) (json.RawMessage, error) {
	return h.Handshake(Handshake{InitExtensions: initExtensions})
}

// Handshake sends initialize as hs says, then initialized when it
// succeeded. The error is the initialize error response, if any.
func (h *Host) Handshake(hs Handshake) (json.RawMessage, error) {
	if hs.ProtocolVersion == "" {
		hs.ProtocolVersion = pluginkit.ProtocolVersion
	}
	if hs.HostName == "" {
		hs.HostName = "animus"
	}
	if hs.HostVersion == "" {
		hs.HostVersion = "0.6.33"
	}
	if hs.Capabilities == nil {
		hs.Capabilities = &pluginkit.HostCapabilities{Streaming: true, Progress: true, Cancellation: true}
	}
	params := map[string]any{
		"protocol_version": hs.ProtocolVersion,
		"host_info":        pluginkit.HostInfo{Name: hs.HostName, Version: hs.HostVersion},
		"capabilities":     hs.Capabilities,
	}
	if ext, err := rawJSON(hs.InitExtensions); err != nil {
		return nil, err
	} else if len(ext) > 0 {
		params["init_extensions"] = json.RawMessage(ext)
	}
	res, err := h.Call("initialize", params)
	if err != nil {
		return nil, err
	}
	return res, h.Notify("initialized", nil)
}

// WaitNotification returns the first notification from index from on
// that match accepts, and the index after it.
func (h *Host) WaitNotification(ctx context.Context, from int, match func(Frame) bool) (Frame, int, error) {
	return h.WaitFrame(ctx, from, func(f Frame) bool { return f.IsNotification() && match(f) })
}

// WaitFrame returns the first frame of any kind from index from on that
// match accepts, and the index after it.
func (h *Host) WaitFrame(ctx context.Context, from int, match func(Frame) bool) (Frame, int, error) {
	var found Frame
	next := max(from, 0)
	err := h.waitFor(ctx, "matching frame", func() bool {
		for ; next < len(h.frames); next++ {
			if f := h.frames[next]; match(f) {
				found = f
				next++
				return true
			}
		}
		return false
	})
	return found, next, err
}

// Frames returns the frames received from index from on and the index to
// continue from.
func (h *Host) Frames(from int) ([]Frame, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	from = min(max(from, 0), len(h.frames))
	return append([]Frame(nil), h.frames[from:]...), len(h.frames)
}

// Wait waits up to d for Serve to return, and reports the exit code
// pluginkit.Main would give.
func (h *Host) Wait(d time.Duration) (exited bool, code int) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-h.done:
	case <-t.C:
		select {
		case <-h.done:
		default:
			return false, 0
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return true, h.code
}

// Err is what Serve returned once the plugin stopped (nil before).
func (h *Host) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// Close closes stdin, as the testkit does, and waits up to closeWait for
// the plugin to drain. It reports whether it did.
func (h *Host) Close() bool {
	h.in.Close()
	exited, _ := h.Wait(closeWait)
	return exited
}

func (h *Host) all() []Frame {
	frames, _ := h.Frames(0)
	return frames
}

// Log is the wire log and the plugin's own log, for a failure report.
func (h *Host) Log() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b bytes.Buffer
	for _, l := range h.wire {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString("plugin log:\n")
	b.Write(h.logs.Bytes())
	return b.String()
}

// PluginLog is what the plugin logged so far (JSON lines), when Start or
// New installed the logger.
func (h *Host) PluginLog() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.logs.String()
}

// lockedWriter appends the plugin's log lines to the host's report.
type lockedWriter struct{ h *Host }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	return w.h.logs.Write(p)
}
