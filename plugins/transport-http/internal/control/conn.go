package control

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// maxFrameBytes bounds one inbound line. The daemon's own readers give up
// at 8 MiB; plugin/call results relayed from plugins can be large, so allow
// twice that before declaring the connection broken.
const maxFrameBytes = 16 << 20

// writeTimeout bounds one frame write. The daemon reads every connection
// continuously, so a write that stalls this long means it is wedged.
const writeTimeout = 5 * time.Second

// conn is one persistent connection to the control socket. One reader
// goroutine owns the inbound side and routes each frame: responses by id to
// the waiting caller, notifications by params.id to their subscription.
type conn struct {
	nc  net.Conn
	wmu sync.Mutex // one frame per write

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan reply
	subs    map[int64]*Subscription
	dead    bool
	why     error // set once dead

	inflight atomic.Int32 // requests awaiting a reply, for the pool's choice
	done     chan struct{}
}

type reply struct {
	result json.RawMessage
	err    error
}

// inbound is any frame the daemon writes. A nil ID means the key was absent.
type inbound struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *wireError      `json:"error"`
}

func dial(ctx context.Context, path string) (*conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	c := &conn{
		nc:      nc,
		pending: map[int64]chan reply{},
		subs:    map[int64]*Subscription{},
		done:    make(chan struct{}),
	}
	go c.readLoop()
	return c, nil
}

// call sends one request and waits for its reply or ctx.
func (c *conn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id, ch, err := c.register(nil)
	if err != nil {
		return nil, err
	}
	if err := c.send(id, method, params); err != nil {
		c.unregister(id)
		return nil, err
	}
	select {
	case r := <-ch:
		return r.result, r.err
	case <-ctx.Done():
		// The request stays registered: the daemon answers a connection's
		// requests in order, so this one keeps the connection busy until
		// its late reply arrives (and is dropped into the buffered slot).
		// Counting it as in flight steers the pool to other connections.
		return nil, ctx.Err()
	}
}

// register reserves the next id and its reply slot; sub, when set, is
// registered under the same id before anything is written, because the
// daemon may send the stream's first notifications before the ack.
func (c *conn) register(sub *Subscription) (int64, chan reply, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return 0, nil, fmt.Errorf("%w: %v", errNotSent, c.why)
	}
	c.nextID++
	id := c.nextID
	ch := make(chan reply, 1)
	c.pending[id] = ch
	c.inflight.Add(1)
	if sub != nil {
		sub.id = id
		c.subs[id] = sub
	}
	return id, ch, nil
}

func (c *conn) unregister(id int64) {
	c.mu.Lock()
	if _, ok := c.pending[id]; ok {
		delete(c.pending, id)
		c.inflight.Add(-1)
	}
	c.mu.Unlock()
}

type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// send writes a request. A failed write kills the connection and is
// reported as errNotSent: the daemon cannot have parsed a partial line.
func (c *conn) send(id int64, method string, params any) error {
	frame, err := encode(request{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	if err != nil {
		return err
	}
	if err := c.write(frame); err != nil {
		return fmt.Errorf("%w: %v", errNotSent, err)
	}
	return nil
}

func (c *conn) notify(method string, params any) error {
	frame, err := encode(notification{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		return err
	}
	return c.write(frame)
}

func (c *conn) write(frame []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.nc.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := c.nc.Write(frame); err != nil {
		c.kill(err)
		return err
	}
	return nil
}

func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := rustjson.Encode(&b, v); err != nil { // a JSON line: Encode appends the '\n'
		return nil, err
	}
	return b.Bytes(), nil
}

// kill closes the socket; the reader then fails everything still waiting.
func (c *conn) kill(cause error) {
	c.mu.Lock()
	if !c.dead {
		c.dead, c.why = true, cause
	}
	c.mu.Unlock()
	c.nc.Close()
}

func (c *conn) alive() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.dead
}

func (c *conn) readLoop() {
	r := bufio.NewReaderSize(c.nc, 64<<10)
	var err error
	for {
		var line []byte
		if line, err = readLine(r); err != nil {
			break
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var f inbound
		if jerr := json.Unmarshal(line, &f); jerr != nil {
			err = fmt.Errorf("malformed frame from daemon: %v", jerr)
			break
		}
		c.route(&f)
	}
	if errors.Is(err, io.EOF) {
		err = errors.New("daemon closed the connection")
	}
	c.kill(err)
	c.failAll()
}

// readLine reads one '\n'-terminated line of at most maxFrameBytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var long []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if err == nil {
			if long == nil {
				return chunk, nil
			}
			return append(long, chunk...), nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
		if len(long)+len(chunk) > maxFrameBytes {
			return nil, fmt.Errorf("frame from daemon exceeds %d bytes", maxFrameBytes)
		}
		long = append(long, chunk...)
	}
}

func (c *conn) route(f *inbound) {
	if f.Method != "" {
		c.routeNotification(f)
		return
	}
	if len(f.ID) == 0 || string(f.ID) == "null" {
		// The daemon answers a line it cannot parse with an error that has
		// no id. It reads and answers each connection in order, so the
		// oldest unanswered request is the one it could not read.
		if f.Error != nil {
			c.deliverOldest(reply{err: f.Error.toRPC()})
		}
		return
	}
	id, ok := parseID(f.ID)
	if !ok {
		return
	}
	r := reply{result: f.Result}
	if f.Error != nil {
		r = reply{err: f.Error.toRPC()}
	} else if r.result == nil {
		r.result = json.RawMessage("null")
	}
	c.deliver(id, r)
}

func (c *conn) deliver(id int64, r reply) {
	c.mu.Lock()
	ch, ok := c.pending[id]
	if ok {
		delete(c.pending, id)
		c.inflight.Add(-1)
	}
	sub := c.subs[id]
	if sub != nil && r.err != nil {
		delete(c.subs, id) // no stream follows an error
	}
	c.mu.Unlock()
	if ok {
		ch <- r
	}
	if sub != nil {
		sub.acked.Store(true)
	}
}

func (c *conn) deliverOldest(r reply) {
	c.mu.Lock()
	var oldest int64
	for id := range c.pending {
		if oldest == 0 || id < oldest {
			oldest = id
		}
	}
	c.mu.Unlock()
	if oldest != 0 {
		c.deliver(oldest, r)
	}
}

// streamParams is the params of a stream notification and of
// subscription/closed.
type streamParams struct {
	ID     json.RawMessage `json:"id"`
	Data   json.RawMessage `json:"data"`
	Reason string          `json:"reason"`
}

func (c *conn) routeNotification(f *inbound) {
	var p streamParams
	if json.Unmarshal(f.Params, &p) != nil {
		return
	}
	id, ok := parseID(p.ID)
	if !ok {
		return
	}
	c.mu.Lock()
	sub := c.subs[id]
	if sub != nil && f.Method == "subscription/closed" {
		delete(c.subs, id)
	}
	c.mu.Unlock()
	if sub == nil {
		return
	}
	if f.Method == "subscription/closed" {
		sub.finish(p.Reason, nil)
		return
	}
	sub.push(Event{Method: f.Method, Data: p.Data})
}

// parseID accepts a number or a numeric string, as the Rust client does.
func parseID(raw json.RawMessage) (int64, bool) {
	s := string(bytes.TrimSpace(raw))
	if len(s) >= 2 && s[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, false
		}
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil
}

// failAll runs once the reader has stopped: every waiting caller and every
// open stream learns the connection is gone.
func (c *conn) failAll() {
	c.mu.Lock()
	pending, subs := c.pending, c.subs
	c.pending, c.subs = map[int64]chan reply{}, map[int64]*Subscription{}
	c.inflight.Store(0)
	why := c.why
	c.mu.Unlock()
	lost := fmt.Errorf("%w: %v", ErrConnectionLost, why)
	for _, ch := range pending {
		ch <- reply{err: lost}
	}
	for _, s := range subs {
		s.finish("", lost)
	}
	close(c.done)
}
