package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

func TestBindErrorCategories(t *testing.T) {
	wrap := func(errno syscall.Errno) error {
		return &net.OpError{Op: "listen", Net: "tcp", Err: os.NewSyscallError("bind", errno)}
	}
	for _, c := range []struct {
		err      error
		category pluginkit.Category
		code     int
	}{
		{wrap(syscall.EADDRINUSE), pluginkit.CategoryAddressInUse, -32603},
		{wrap(syscall.EACCES), pluginkit.CategoryPermissionDenied, -32603},
		{wrap(syscall.EPERM), pluginkit.CategoryPermissionDenied, -32603},
		{wrap(syscall.EADDRNOTAVAIL), pluginkit.CategoryOther, -32603},
		{errors.New("odd"), pluginkit.CategoryOther, -32603},
	} {
		var e *pluginkit.Error
		if !errors.As(bindError("127.0.0.1:80", c.err), &e) || e.Category != c.category || e.Code != c.code {
			t.Errorf("bindError(%v) = %+v, want %s %d", c.err, e, c.category, c.code)
		}
	}
}

func start(t *testing.T, s *Service, cfg string) string {
	t.Helper()
	p := startParams("127.0.0.1:0", cfg)
	p.ControlSocketPath = "/tmp/animus-unit-none/control.sock"
	info, err := s.Start(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return info.BoundAddr
}

// health/check: degraded before start, healthy serving, unhealthy once the
// listener dies under the server, degraded after shutdown.
func TestHealthStates(t *testing.T) {
	s := New(env(nil))
	if h := s.Health(context.Background()); h.Status != pluginkit.Degraded {
		t.Fatalf("before start: %+v", h)
	}
	start(t, s, "")
	if h := s.Health(context.Background()); h.Status != pluginkit.Healthy {
		t.Fatalf("serving: %+v", h)
	}
	s.mu.Lock()
	s.run.ln.Close() // the listener dies; the server did not stop it
	s.mu.Unlock()
	deadline := time.Now().Add(3 * time.Second)
	for s.Health(context.Background()).Status != pluginkit.Unhealthy && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if h := s.Health(context.Background()); h.Status != pluginkit.Unhealthy || h.LastError == "" {
		t.Fatalf("after the listener died: %+v", h)
	}
	if _, err := s.Shutdown(context.Background(), struct{}{}); err != nil {
		t.Fatal(err)
	}
	if h := s.Health(context.Background()); h.Status != pluginkit.Degraded {
		t.Fatalf("after shutdown: %+v", h)
	}
}

// Shutdown waits for a request in flight (bounded by drain_timeout_ms),
// closes a connection that never sent a request at once, and reports
// whether everything drained.
func TestShutdownDrainAndDeadline(t *testing.T) {
	for _, c := range []struct {
		name    string
		drainMS int
		drained bool
	}{{"drains", 3000, true}, {"deadline", 100, false}} {
		t.Run(c.name, func(t *testing.T) {
			s := New(env(nil))
			addr := start(t, s, fmt.Sprintf(`{"drain_timeout_ms":%d}`, c.drainMS))
			idle, err := net.Dial("tcp", addr) // connected, never sends a request
			if err != nil {
				t.Fatal(err)
			}
			defer idle.Close()
			// Hold a request in flight: a body that arrives slowly.
			pr, pw := io.Pipe()
			done := make(chan int, 1)
			go func() {
				req, _ := http.NewRequest("POST", "http://"+addr+"/api/v1/queue/enqueue", pr)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					done <- -1
					return
				}
				resp.Body.Close()
				done <- resp.StatusCode
			}()
			pw.Write([]byte(`{"task_id":`))
			time.Sleep(100 * time.Millisecond)
			go func() {
				time.Sleep(400 * time.Millisecond)
				pw.Write([]byte(`5}`)) // a 400, after shutdown began
				pw.Close()
			}()
			began := time.Now()
			res, err := s.Shutdown(context.Background(), struct{}{})
			if err != nil {
				t.Fatal(err)
			}
			took := time.Since(began)
			if res.Drained != c.drained {
				t.Fatalf("drained %v, want %v (took %v)", res.Drained, c.drained, took)
			}
			if c.drained {
				if code := <-done; code != 400 {
					t.Fatalf("in-flight request finished with %d, want its own 400", code)
				}
			}
			if took > 2500*time.Millisecond {
				t.Fatalf("shutdown took %v: the idle connection held it", took)
			}
			if ln, err := net.Listen("tcp", addr); err != nil {
				t.Fatalf("port still bound: %v", err)
			} else {
				ln.Close()
			}
		})
	}
}

func TestSecondStartAndIdempotentShutdown(t *testing.T) {
	s := New(env(nil))
	if res, err := s.Shutdown(context.Background(), struct{}{}); err != nil || !res.Shutdown {
		t.Fatalf("shutdown before start: %+v %v", res, err)
	}
	addr := start(t, s, "")
	p := startParams("127.0.0.1:0", "")
	if _, err := s.Start(context.Background(), p); err == nil {
		t.Fatal("second start succeeded")
	}
	if c, err := net.Dial("tcp", addr); err != nil {
		t.Fatalf("first listener gone after a refused start: %v", err)
	} else {
		c.Close()
	}
	for i := 0; i < 2; i++ {
		if _, err := s.Shutdown(context.Background(), struct{}{}); err != nil {
			t.Fatal(err)
		}
	}
	start(t, s, "") // and it can start again
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A shutdown that lands before the Serve goroutine has registered the
// listener with http.Server (a start→shutdown pair a few hundred
// microseconds apart, as CI once produced) must still free the port before
// it answers: http.Server.Shutdown only closes listeners it already knows.
func TestShutdownRightAfterStartFreesPort(t *testing.T) {
	s := New(env(nil))
	for i := 0; i < 200; i++ {
		addr := start(t, s, "")
		if _, err := s.Shutdown(context.Background(), struct{}{}); err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("round %d: %s still held after shutdown answered: %v", i, addr, err)
		}
		ln.Close()
	}
}
