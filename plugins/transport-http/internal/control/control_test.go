package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// script is a tiny control server for one test: each accepted connection
// runs fn with a reader and a line writer.
type script func(t *testing.T, in *bufio.Reader, out func(string), c net.Conn)

func listen(t *testing.T, fn script) (path string, accepted func() int) {
	t.Helper()
	dir, err := os.MkdirTemp("", "ctl-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path = filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	n := 0
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			n++
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				var wmu sync.Mutex
				out := func(s string) {
					wmu.Lock()
					defer wmu.Unlock()
					fmt.Fprintln(c, s)
				}
				fn(t, bufio.NewReader(c), out, c)
			}()
		}
	}()
	return path, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

type req struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func read(in *bufio.Reader) (req, bool) {
	line, err := in.ReadBytes('\n')
	if err != nil {
		return req{}, false
	}
	var r req
	return r, json.Unmarshal(line, &r) == nil
}

// echo answers every request with {"method":…,"params":…}.
func echo(_ *testing.T, in *bufio.Reader, out func(string), _ net.Conn) {
	for {
		r, ok := read(in)
		if !ok {
			return
		}
		if len(r.ID) == 0 {
			continue
		}
		p := r.Params
		if len(p) == 0 {
			p = json.RawMessage("null")
		}
		out(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"method":%q,"params":%s}}`, r.ID, r.Method, p))
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestCallRoundTripAndReuse(t *testing.T) {
	path, accepted := listen(t, echo)
	p := NewPool(path, 4)
	defer p.Close()
	for i := 0; i < 3; i++ {
		res, err := p.Call(ctx(t), "daemon/status", nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(res) != `{"method":"daemon/status","params":null}` {
			t.Fatalf("result %s (no params key must reach the daemon as absent)", res)
		}
	}
	res, err := p.Call(ctx(t), "workflow/get", map[string]string{"id": "wf-1"})
	if err != nil || string(res) != `{"method":"workflow/get","params":{"id":"wf-1"}}` {
		t.Fatalf("%s %v", res, err)
	}
	if n := accepted(); n != 1 {
		t.Errorf("4 sequential calls dialled %d times, want 1", n)
	}
}

// Replies come back in reverse order on one connection; each caller gets
// its own.
func TestRepliesDemultiplexedByID(t *testing.T) {
	const n = 5
	path, _ := listen(t, func(_ *testing.T, in *bufio.Reader, out func(string), _ net.Conn) {
		var got []req
		for len(got) < n {
			r, ok := read(in)
			if !ok {
				return
			}
			got = append(got, r)
		}
		for i := n - 1; i >= 0; i-- {
			out(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, got[i].ID, got[i].Params))
		}
	})
	p := NewPool(path, 1)
	defer p.Close()
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := p.Call(ctx(t), "x", map[string]int{"n": i})
			if err != nil || string(res) != fmt.Sprintf(`{"n":%d}`, i) {
				t.Errorf("call %d got %s %v", i, res, err)
			}
		}()
	}
	wg.Wait()
}

func TestErrorsKeepTheirKind(t *testing.T) {
	path, _ := listen(t, func(_ *testing.T, in *bufio.Reader, out func(string), c net.Conn) {
		for {
			r, ok := read(in)
			if !ok {
				return
			}
			switch r.Method {
			case "category":
				out(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"not found: x","data":{"category":"not_found"}}}`, r.ID))
			case "plain":
				out(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"unknown control method: plain"}}`, r.ID))
			case "parse":
				out(`{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error: eof"}}`)
			case "garbage":
				out(`{"jsonrpc":"2.0","id":` + string(r.ID) + `,"result":{`)
			case "drop":
				c.Close()
				return
			}
		}
	})
	p := NewPool(path, 1)
	defer p.Close()
	var rpc *RPCError
	if _, err := p.Call(ctx(t), "category", nil); !errors.As(err, &rpc) || rpc.Category != "not_found" || rpc.Code != -32602 {
		t.Errorf("category error: %v", err)
	}
	if _, err := p.Call(ctx(t), "plain", nil); !errors.As(err, &rpc) || rpc.Category != "" || rpc.Code != -32601 {
		t.Errorf("error without data: %v", err)
	}
	// An id-less parse error answers the oldest request still waiting.
	if _, err := p.Call(ctx(t), "parse", nil); !errors.As(err, &rpc) || rpc.Code != -32700 {
		t.Errorf("id-less parse error: %v", err)
	}
	if _, err := p.Call(ctx(t), "garbage", nil); !errors.Is(err, ErrConnectionLost) {
		t.Errorf("malformed reply: %v, want ErrConnectionLost", err)
	}
	if _, err := p.Call(ctx(t), "drop", nil); !errors.Is(err, ErrConnectionLost) {
		t.Errorf("dropped connection: %v, want ErrConnectionLost", err)
	}
	if _, err := p.Call(ctx(t), "category", nil); !errors.As(err, &rpc) {
		t.Errorf("a fresh connection after the drop: %v", err)
	}
}

func TestUnreachable(t *testing.T) {
	p := NewPool(filepath.Join(t.TempDir(), "none.sock"), 2)
	defer p.Close()
	if _, err := p.Call(ctx(t), "daemon/status", nil); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("got %v, want ErrUnreachable", err)
	}
	if _, err := p.Subscribe(ctx(t), "daemon/events", nil); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("subscribe: got %v, want ErrUnreachable", err)
	}
	p.Close()
	if _, err := p.Call(ctx(t), "daemon/status", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
}

// The pool grows past one connection only when the others are busy, and
// never past its size.
func TestPoolGrowsToItsSize(t *testing.T) {
	release := make(chan struct{})
	path, accepted := listen(t, func(_ *testing.T, in *bufio.Reader, out func(string), _ net.Conn) {
		for {
			r, ok := read(in)
			if !ok {
				return
			}
			<-release
			out(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, r.ID))
		}
	})
	p := NewPool(path, 3)
	defer p.Close()
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := p.Call(ctx(t), "slow", nil); err != nil {
				t.Error(err)
			}
		}()
	}
	deadline := time.Now().Add(3 * time.Second)
	for accepted() < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	wg.Wait()
	if n := accepted(); n != 3 {
		t.Errorf("6 concurrent blocked calls dialled %d connections, want the pool size 3", n)
	}
	if open, _ := p.Stats(); open != 3 {
		t.Errorf("open connections %d, want 3", open)
	}
}

// Streams: notifications sent before the ack are kept, routing accepts a
// numeric-string params.id, other ids are ignored, subscription/closed ends
// the stream with its reason, and Close sends $/cancelRequest with the id
// as issued.
func TestSubscribe(t *testing.T) {
	cancels := make(chan string, 1)
	path, _ := listen(t, func(_ *testing.T, in *bufio.Reader, out func(string), _ net.Conn) {
		r, ok := read(in)
		if !ok {
			return
		}
		out(fmt.Sprintf(`{"jsonrpc":"2.0","method":"daemon/event","params":{"id":%s,"data":{"n":1}}}`, r.ID))
		out(`{"jsonrpc":"2.0","method":"daemon/event","params":{"id":999,"data":{"n":-1}}}`)
		out(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"watching":true}}`, r.ID))
		out(fmt.Sprintf(`{"jsonrpc":"2.0","method":"daemon/event","params":{"id":"%s","data":{"n":2}}}`, r.ID))
		if r.Method == "closing" {
			out(fmt.Sprintf(`{"jsonrpc":"2.0","method":"subscription/closed","params":{"id":%s,"reason":"done"}}`, r.ID))
		}
		for {
			c, ok := read(in)
			if !ok {
				return
			}
			if c.Method == "$/cancelRequest" {
				cancels <- string(c.Params)
			}
		}
	})
	sub, err := Subscribe(ctx(t), path, "closing", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for ev := range sub.Events() {
		got = append(got, string(ev.Data))
	}
	if len(got) != 2 || got[0] != `{"n":1}` || got[1] != `{"n":2}` || sub.Reason() != "done" || sub.Err() != nil {
		t.Fatalf("events %v reason %q err %v", got, sub.Reason(), sub.Err())
	}
	sub.Close()

	sub, err = Subscribe(ctx(t), path, "open", nil)
	if err != nil {
		t.Fatal(err)
	}
	<-sub.Events()
	<-sub.Events()
	sub.Close()
	select {
	case c := <-cancels:
		if c != `{"id":1}` {
			t.Errorf("$/cancelRequest params %s, want the id exactly as issued", c)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Close sent no $/cancelRequest")
	}
	if _, ok := <-sub.Events(); ok {
		t.Error("events still open after Close")
	}
}

func TestSubscribeErrorMeansNoStream(t *testing.T) {
	path, _ := listen(t, func(_ *testing.T, in *bufio.Reader, out func(string), _ net.Conn) {
		r, _ := read(in)
		out(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"unavailable: no broadcaster","data":{"category":"unavailable"}}}`, r.ID))
	})
	_, err := Subscribe(ctx(t), path, "workflow/events", nil)
	var rpc *RPCError
	if !errors.As(err, &rpc) || rpc.Category != "unavailable" {
		t.Fatalf("got %v, want the unavailable RPCError", err)
	}
}

func TestParseID(t *testing.T) {
	for raw, want := range map[string]int64{`7`: 7, `"7"`: 7, ` 12 `: 12} {
		if got, ok := parseID(json.RawMessage(raw)); !ok || got != want {
			t.Errorf("parseID(%s) = %d %v", raw, got, ok)
		}
	}
	for _, raw := range []string{`null`, `"x"`, `1.5`, `{}`} {
		if _, ok := parseID(json.RawMessage(raw)); ok {
			t.Errorf("parseID(%s) accepted", raw)
		}
	}
}
