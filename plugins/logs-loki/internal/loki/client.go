package loki

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Options configure a Client.
type Options struct {
	BaseURL            *url.URL
	TenantID           string
	Username, Password string
	BearerToken        string
	Timeout            time.Duration // per request; 0 = 5 s
	CAFile             string
	InsecureSkipVerify bool
	// Encoding of push bodies: "protobuf" (default) or "json".
	Encoding  string
	UserAgent string
}

// Client talks to one Loki (one tenant).
type Client struct {
	o    Options
	http *http.Client
	// pushURL is built once: a store must not re-render and re-parse it.
	pushURL string
	// encoders holds idle push encoders (see encoder). A sync.Pool loses
	// them at every GC, which a 500-entry store triggers, so they are
	// kept here.
	encoders chan *encoder
}

// New builds a client. It fails only when the CA file cannot be used.
func New(o Options) (*Client, error) {
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.Encoding == "" {
		o.Encoding = "protobuf"
	}
	if o.UserAgent == "" {
		o.UserAgent = "animus-logs-loki"
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 8
	if o.CAFile != "" || o.InsecureSkipVerify {
		cfg := &tls.Config{InsecureSkipVerify: o.InsecureSkipVerify} //nolint:gosec // opt-in for testing
		if o.CAFile != "" {
			pem, err := os.ReadFile(o.CAFile)
			if err != nil {
				return nil, fmt.Errorf("read CA file: %w", err)
			}
			pool, err := x509.SystemCertPool()
			if err != nil || pool == nil {
				pool = x509.NewCertPool()
			}
			if !pool.AppendCertsFromPEM(pem) {
				return nil, errors.New("CA file holds no PEM certificate")
			}
			cfg.RootCAs = pool
		}
		tr.TLSClientConfig = cfg
	}
	c := &Client{o: o, http: &http.Client{Transport: tr}, encoders: make(chan *encoder, 4)}
	c.pushURL = c.endpoint("/loki/api/v1/push", nil)
	return c, nil
}

// encoder takes an idle push encoder or makes one.
func (c *Client) encoder() *encoder {
	select {
	case e := <-c.encoders:
		return e
	default:
		return &encoder{}
	}
}

// putEncoder keeps e for the next push unless enough are idle. A buffer
// grown past maxKeptBuffer by an unusually large store is let go, so an
// idle plugin does not hold on to it.
func (c *Client) putEncoder(e *encoder) {
	if cap(e.raw) > maxKeptBuffer {
		e.raw = nil
	}
	if cap(e.stream) > maxKeptBuffer {
		e.stream = nil
	}
	select {
	case c.encoders <- e:
	default:
	}
}

// maxKeptBuffer bounds an idle encoder's buffers: 4 MiB holds a
// 10,000-entry store of daemon events.
const maxKeptBuffer = 4 << 20

// Timeout is the per-request timeout.
func (c *Client) Timeout() time.Duration { return c.o.Timeout }

// StatusError is a non-2xx answer from Loki.
type StatusError struct {
	Status     int
	Message    string // Loki's body, trimmed and bounded
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("loki answered %d: %s", e.Status, e.Message)
}

// maxErrorBody bounds how much of an error body is kept.
const maxErrorBody = 4 << 10

func (c *Client) endpoint(path string, q url.Values) string {
	u := *c.o.BaseURL
	u.Path = strings.TrimRight(u.Path, "/") + path
	if q != nil {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// header sets the tenant and auth headers shared by HTTP and websocket
// requests.
func (c *Client) header(h http.Header) {
	h.Set("User-Agent", c.o.UserAgent)
	if c.o.TenantID != "" {
		h.Set("X-Scope-OrgID", c.o.TenantID)
	}
	switch {
	case c.o.Username != "":
		req := http.Request{Header: h}
		req.SetBasicAuth(c.o.Username, c.o.Password)
	case c.o.BearerToken != "":
		h.Set("Authorization", "Bearer "+c.o.BearerToken)
	}
}

// do sends one request under the per-request timeout and returns the body
// of a 2xx answer, or a *StatusError.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body []byte, hdr map[string]string) ([]byte, error) {
	return c.doURL(ctx, method, c.endpoint(path, q), body, hdr)
}

// doURL is do with the URL already rendered.
func (c *Client) doURL(ctx context.Context, method, u string, body []byte, hdr map[string]string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	c.header(req.Header)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		se := &StatusError{Status: resp.StatusCode, Message: strings.TrimSpace(string(b))}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			se.RetryAfter = time.Duration(s) * time.Second
		}
		return nil, se
	}
	return io.ReadAll(io.LimitReader(resp.Body, 256<<20))
}

// Ready calls GET /ready.
func (c *Client) Ready(ctx context.Context) error {
	_, err := c.do(ctx, http.MethodGet, "/ready", nil, nil, nil)
	return err
}

// Labels calls GET /loki/api/v1/labels over the last five minutes: the
// cheap authenticated probe behind gateways that hide /ready.
func (c *Client) Labels(ctx context.Context) error {
	_, err := c.do(ctx, http.MethodGet, "/loki/api/v1/labels", url.Values{"since": {"5m"}}, nil, nil)
	return err
}
