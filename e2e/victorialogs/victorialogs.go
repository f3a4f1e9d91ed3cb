package victorialogs

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// EnvURL names the variable holding the server's base URL.
const EnvURL = "VICTORIALOGS_URL"

// Server is a running VictoriaLogs.
type Server struct {
	// URL is the base URL, e.g. http://127.0.0.1:19428.
	URL    string
	client *http.Client

	mu          sync.Mutex
	lastMetrics time.Time // when PushCounts last read /metrics
}

// FromEnv returns the server named by VICTORIALOGS_URL after checking its
// /health. When the variable is unset it fails the test under CI=true and
// skips it otherwise, with the command that provides one; a set but dead
// server always fails.
func FromEnv(tb testing.TB) *Server {
	tb.Helper()
	u := strings.TrimRight(os.Getenv(EnvURL), "/")
	if u == "" {
		const why = EnvURL + " is unset: these tests push to a real VictoriaLogs; start one with " +
			"`eval \"$(scripts/victorialogs.sh start)\"; export " + EnvURL + "` (stop: scripts/victorialogs.sh stop)"
		if os.Getenv("CI") == "true" {
			tb.Fatal(why + "; CI must run them (.ci/run starts VictoriaLogs before make test)")
		}
		tb.Skip(why)
	}
	// lastMetrics = now: the first PushCounts must not take a cached page
	// either.
	s := &Server{URL: u, client: &http.Client{Timeout: 10 * time.Second}, lastMetrics: time.Now()}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Health(ctx); err != nil {
		tb.Fatalf("%s=%s: %v", EnvURL, u, err)
	}
	return s
}

// LokiURL is the base a Loki client takes as LOKI_URL: the client appends
// /loki/api/v1/push, which lands on VictoriaLogs' /insert/loki/api/v1/push.
func (s *Server) LokiURL() string { return s.URL + "/insert" }

// PushURL is the full Loki push endpoint.
func (s *Server) PushURL() string { return s.LokiURL() + "/loki/api/v1/push" }

// Health checks GET /health.
func (s *Server) Health(ctx context.Context) error {
	_, err := s.get(ctx, "/health", nil, Tenant{})
	return err
}

// Flush makes everything ingested so far searchable
// (/internal/force_flush).
func (s *Server) Flush(ctx context.Context) error {
	_, err := s.get(ctx, "/internal/force_flush", nil, Tenant{})
	return err
}

// Tenant is a VictoriaLogs tenant. A Loki client selects it with
// X-Scope-OrgID = OrgID().
type Tenant struct{ AccountID, ProjectID uint32 }

// NewTenant returns a random tenant, so tests sharing one server (and
// reruns against a server that kept old data) never see each other's rows.
func NewTenant() Tenant {
	var b [8]byte
	_, _ = rand.Read(b[:])
	// AccountID 0 is the default tenant; keep clear of it.
	return Tenant{AccountID: binary.BigEndian.Uint32(b[:4])%1_000_000_000 + 1, ProjectID: binary.BigEndian.Uint32(b[4:]) % 1000}
}

// OrgID is the X-Scope-OrgID value VictoriaLogs maps to this tenant.
func (t Tenant) OrgID() string { return fmt.Sprintf("%d:%d", t.AccountID, t.ProjectID) }

// Row is one stored log entry as the query API returns it: every field
// as a string, including _msg, _time, _stream and _stream_id.
type Row map[string]string

// Time parses _time.
func (r Row) Time() (time.Time, error) { return time.Parse(time.RFC3339Nano, r["_time"]) }

// Query runs a LogsQL query over [start, end] for tenant and returns the
// rows ordered by _time (the API streams them unordered).
func (s *Server) Query(ctx context.Context, t Tenant, logsql string, start, end time.Time) ([]Row, error) {
	q := url.Values{
		"query": {logsql},
		"start": {start.UTC().Format(time.RFC3339Nano)},
		"end":   {end.UTC().Format(time.RFC3339Nano)},
	}
	body, err := s.get(ctx, "/select/logsql/query", q, t)
	if err != nil {
		return nil, err
	}
	var rows []Row
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var r Row
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("query row %q: %w", line, err)
		}
		rows = append(rows, r)
	}
	sort.SliceStable(rows, func(i, j int) bool { return timeLess(rows[i], rows[j]) })
	return rows, sc.Err()
}

// timeLess orders rows by parsed _time (the string order of RFC 3339 with
// trimmed zeros is not the time order).
func timeLess(a, b Row) bool {
	x, errA := a.Time()
	y, errB := b.Time()
	return errA == nil && errB == nil && x.Before(y)
}

// WaitRows flushes and queries until at least want rows match or ctx ends;
// it returns the last rows seen either way, with ctx's error if short.
func (s *Server) WaitRows(ctx context.Context, t Tenant, logsql string, start, end time.Time, want int) ([]Row, error) {
	for {
		if err := s.Flush(ctx); err != nil {
			return nil, err
		}
		rows, err := s.Query(ctx, t, logsql, start, end)
		if err != nil || len(rows) >= want {
			return rows, err
		}
		select {
		case <-ctx.Done():
			return rows, fmt.Errorf("%d of %d rows visible: %w", len(rows), want, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// PushCounts are VictoriaLogs' counters of Loki push requests per body
// format.
type PushCounts struct{ JSON, Protobuf int64 }

// Sub is c − o.
func (c PushCounts) Sub(o PushCounts) PushCounts {
	return PushCounts{JSON: c.JSON - o.JSON, Protobuf: c.Protobuf - o.Protobuf}
}

// metricsCacheAge is how long VictoriaLogs serves a cached /metrics page
// (lib/appmetrics regenerates it when the last one is older than 1 s).
const metricsCacheAge = time.Second

// PushCounts reads the push counters from /metrics. Because the page is
// cached for a second, it first waits until a second (plus margin) has
// passed since this Server's previous read, so the numbers include every
// push that finished before the call. (Another client reading /metrics in
// between could still hand it a page up to a second old; the tests are
// the only readers.)
func (s *Server) PushCounts(ctx context.Context) (PushCounts, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if wait := time.Until(s.lastMetrics.Add(metricsCacheAge + 100*time.Millisecond)); wait > 0 {
		select {
		case <-ctx.Done():
			return PushCounts{}, ctx.Err()
		case <-time.After(wait):
		}
	}
	body, err := s.get(ctx, "/metrics", nil, Tenant{})
	s.lastMetrics = time.Now()
	if err != nil {
		return PushCounts{}, err
	}
	var c PushCounts
	found := 0
	for _, line := range strings.Split(body, "\n") {
		rest, ok := strings.CutPrefix(line, `vl_http_requests_total{path="/insert/loki/api/v1/push",format="`)
		if !ok {
			continue
		}
		format, value, ok := strings.Cut(rest, `"} `)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return c, fmt.Errorf("metrics line %q: %w", line, err)
		}
		switch format {
		case "json":
			c.JSON, found = n, found+1
		case "protobuf":
			c.Protobuf, found = n, found+1
		}
	}
	if found != 2 {
		return c, fmt.Errorf("/metrics lacks the Loki push counters (vl_http_requests_total{path=\"/insert/loki/api/v1/push\",format=…})")
	}
	return c, nil
}

func (s *Server) get(ctx context.Context, path string, q url.Values, t Tenant) (string, error) {
	u := s.URL + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	if t != (Tenant{}) {
		req.Header.Set("AccountID", strconv.FormatUint(uint64(t.AccountID), 10))
		req.Header.Set("ProjectID", strconv.FormatUint(uint64(t.ProjectID), 10))
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %.500s", path, resp.Status, b)
	}
	return string(b), nil
}
