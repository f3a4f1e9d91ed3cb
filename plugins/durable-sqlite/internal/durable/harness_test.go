package durable

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// conn runs the plugin in process with pluginkit.Serve over pipes: the
// handlers, the wire encoding and the real SQLite store, without building
// the binary (the e2e suite does that).
type conn struct {
	t   *testing.T
	in  *io.PipeWriter
	out *bufio.Reader
	id  int
}

type rpcError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data"`
}

// serve starts svc and sends initialize with init_extensions (nil for none).
func serve(t *testing.T, svc *Service, initExt map[string]any) *conn {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	mux := pluginkit.NewMux()
	svc.Register(mux)
	p := pluginkit.Plugin{
		Name: "animus-durable-sqlite", Kind: "durable_store", Mux: mux, Serial: true,
		KindCapabilities: svc.KindCapabilities(), Init: svc.Init, Health: svc.Health, Close: svc.Close,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = pluginkit.Serve(ctx, p, inR, outW)
		outW.Close()
	}()
	c := &conn{t: t, in: inW, out: bufio.NewReaderSize(outR, 1<<20)}
	t.Cleanup(func() {
		inW.Close()
		cancel()
		go io.Copy(io.Discard, outR) // let a last write finish
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("plugin did not stop")
		}
	})
	params := map[string]any{
		"protocol_version": "1.1.0",
		"host_info":        map[string]string{"name": "animus-agent-runner", "version": "test"},
		"capabilities":     map[string]bool{"cancellation": true},
	}
	if initExt != nil {
		params["init_extensions"] = initExt
	}
	if _, e := c.call("initialize", params); e != nil {
		t.Fatalf("initialize: %+v", e)
	}
	return c
}

func binding(root string) map[string]any {
	return map[string]any{"project_binding": map[string]string{"project_root": root, "repo_scope": "test-000000"}}
}

// call sends one request and returns its raw result or its error.
func (c *conn) call(method string, params any) (json.RawMessage, *rpcError) {
	c.t.Helper()
	c.id++
	raw, ok := params.(string)
	if !ok {
		b, err := json.Marshal(params)
		if err != nil {
			c.t.Fatal(err)
		}
		raw = string(b)
	}
	frame := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", c.id, method, raw)
	if _, err := io.WriteString(c.in, frame); err != nil {
		c.t.Fatal(err)
	}
	want := `"id":` + strconv.Itoa(c.id) + `,`
	for {
		line, err := c.out.ReadString('\n')
		if err != nil {
			c.t.Fatalf("%s: reading reply: %v", method, err)
		}
		if !strings.Contains(line, want) {
			continue
		}
		var resp struct {
			Result json.RawMessage `json:"result"`
			Error  *rpcError       `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &resp); err != nil {
			c.t.Fatalf("%s: bad reply %s: %v", method, line, err)
		}
		return resp.Result, resp.Error
	}
}

// ok calls and fails the test on an error reply, decoding the result into v.
func (c *conn) ok(method string, params any, v any) json.RawMessage {
	c.t.Helper()
	res, e := c.call(method, params)
	if e != nil {
		c.t.Fatalf("%s: error %d %s", method, e.Code, e.Message)
	}
	if v != nil {
		if err := json.Unmarshal(res, v); err != nil {
			c.t.Fatalf("%s: result %s: %v", method, res, err)
		}
	}
	return res
}

// fails calls and expects an error with code (and category, when given).
func (c *conn) fails(method string, params any, code int, category string) *rpcError {
	c.t.Helper()
	res, e := c.call(method, params)
	if e == nil {
		c.t.Fatalf("%s %v: result %s, want error %d", method, params, res, code)
	}
	if e.Code != code || (category != "" && e.Data["category"] != category) {
		c.t.Fatalf("%s %v: error %d %q %v, want %d %s", method, params, e.Code, e.Message, e.Data, code, category)
	}
	return e
}

// env builds a getenv from pairs.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}
