package loki

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/coder/websocket"
)

// TailConn is an open websocket tail.
type TailConn struct {
	c *websocket.Conn
}

// TailFrame is one message of a tail.
type TailFrame struct {
	Entries []Result
	Dropped int // entries Loki could not deliver (dropped_entries)
}

// Tail opens GET /loki/api/v1/tail as a websocket from start (ns), with
// tenant and auth headers on the upgrade request.
func (c *Client) Tail(ctx context.Context, query string, start int64, limit int) (*TailConn, error) {
	q := url.Values{"query": {query}, "start": {strconv.FormatInt(start, 10)}, "limit": {strconv.Itoa(limit)}, "delay_for": {"0"}}
	u := c.endpoint("/loki/api/v1/tail", q)
	switch c.o.BaseURL.Scheme {
	case "https":
		u = "wss" + u[len("https"):]
	default:
		u = "ws" + u[len("http"):]
	}
	h := http.Header{}
	c.header(h)
	dctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	conn, resp, err := websocket.Dial(dctx, u, &websocket.DialOptions{HTTPClient: c.http, HTTPHeader: h})
	if err != nil {
		if resp != nil && resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, &StatusError{Status: resp.StatusCode, Message: http.StatusText(resp.StatusCode)}
		}
		return nil, err
	}
	conn.SetReadLimit(64 << 20)
	return &TailConn{c: conn}, nil
}

// ErrTailClosed reports that Loki closed the tail normally (for example
// after tail_max_duration); the caller reconnects.
var ErrTailClosed = errors.New("tail closed by loki")

// Next reads one frame.
func (t *TailConn) Next(ctx context.Context) (TailFrame, error) {
	_, b, err := t.c.Read(ctx)
	if err != nil {
		if websocket.CloseStatus(err) == websocket.StatusNormalClosure {
			return TailFrame{}, ErrTailClosed
		}
		return TailFrame{}, err
	}
	var f struct {
		Streams json.RawMessage   `json:"streams"`
		Dropped []json.RawMessage `json:"dropped_entries"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return TailFrame{}, fmt.Errorf("undecodable tail frame: %w", err)
	}
	entries, err := DecodeStreams(f.Streams)
	return TailFrame{Entries: entries, Dropped: len(f.Dropped)}, err
}

// Close ends the tail.
func (t *TailConn) Close() { _ = t.c.Close(websocket.StatusNormalClosure, "") }
