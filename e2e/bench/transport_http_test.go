package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/fakedaemon"
)

// transportRig is animus-transport-http started against an in-process fake
// daemon, with an HTTP client for the bound address (the SSE benchmark's).
type transportRig struct {
	d      *fakedaemon.Daemon
	base   string
	client *http.Client
}

func newTransportRig(b *testing.B) *transportRig {
	b.Helper()
	dir, err := os.MkdirTemp("", "bt-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	d, err := fakedaemon.Start(fakedaemon.Options{Path: filepath.Join(dir, "control.sock")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	plugin := spawn(b, binaries.Path(b, "animus-transport-http"))
	plugin.handshake(b)
	params, _ := json.Marshal(map[string]any{"control_socket_path": d.Path(), "project_root": dir, "bind_addr": "127.0.0.1:0"})
	resp := plugin.roundTrip(b, "transport/start", string(params))
	var frame struct {
		Result struct {
			BoundAddr string `json:"bound_addr"`
		} `json:"result"`
	}
	if err := json.Unmarshal(resp, &frame); err != nil || frame.Result.BoundAddr == "" {
		b.Fatalf("transport/start: %s", resp)
	}
	b.Cleanup(func() { plugin.roundTrip(b, "transport/shutdown", "{}") })
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128, MaxConnsPerHost: 128}}
	b.Cleanup(client.CloseIdleConnections)
	return &transportRig{d: d, base: "http://" + frame.Result.BoundAddr, client: client}
}

// httpClient is what a client keeping one HTTP/1.1 connection alive does:
// write the request, parse the response (net/http's own parser), reuse the
// connection. It mirrors directClient, one persistent connection and one
// request at a time, so both sides pay only for their protocol and server.
// http.Client is not used here: its per-connection read and write
// goroutines cost the bench process ~15 µs of CPU per request more than
// this and add ~40 µs to the p50 at 1 client (profiled), which is the Go
// client's overhead, not the transport's.
type httpClient struct {
	c   net.Conn
	r   *bufio.Reader
	req []byte
}

func (r *transportRig) dialHTTP(b *testing.B) *httpClient {
	host := strings.TrimPrefix(r.base, "http://")
	c, err := net.Dial("tcp", host)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return &httpClient{c: c, r: bufio.NewReaderSize(c, 64<<10),
		req: []byte("GET /api/v1/daemon/status HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: animus-bench\r\n\r\n")}
}

// getStatus runs on the workers' goroutines, so it reports with Error.
func (h *httpClient) getStatus(b *testing.B) {
	if _, err := h.c.Write(h.req); err != nil {
		b.Error(err)
		return
	}
	resp, err := http.ReadResponse(h.r, nil)
	if err != nil {
		b.Error(err)
		return
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.Close {
		b.Errorf("GET daemon/status: connection not kept alive (%v)", err)
	}
	if resp.StatusCode != 200 || !bytes.HasPrefix(body, []byte(`{"ok":true`)) {
		b.Errorf("GET daemon/status: %d %s", resp.StatusCode, body)
	}
}

// directClient is what a client talking to the control socket itself does:
// one persistent connection, one request at a time.
type directClient struct {
	c  net.Conn
	r  *bufio.Reader
	id int
}

func dialDirect(b *testing.B, path string) *directClient {
	c, err := net.Dial("unix", path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return &directClient{c: c, r: bufio.NewReaderSize(c, 64<<10)}
}

func (d *directClient) call(b *testing.B, method string) []byte {
	d.id++
	if _, err := fmt.Fprintf(d.c, `{"jsonrpc":"2.0","id":%d,"method":%q}`+"\n", d.id, method); err != nil {
		b.Fatal(err)
	}
	want := []byte(`"id":` + strconv.Itoa(d.id) + `,`)
	for {
		line, err := d.r.ReadBytes('\n')
		if err != nil {
			b.Fatal(err)
		}
		if bytes.Contains(line, want) {
			return line
		}
	}
}

// runConcurrent spreads n calls over c workers and returns each call's
// latency and the wall time.
func runConcurrent(n, c int, call func(worker int)) ([]time.Duration, time.Duration) {
	lat := make([][]time.Duration, c)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < c; w++ {
		share := n / c
		if w < n%c {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < share; i++ {
				t0 := time.Now()
				call(w)
				lat[w] = append(lat[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	return all, wall
}

// BenchmarkTransportHTTP measures GET /api/v1/daemon/status through the
// built animus-transport-http next to daemon/status sent straight to the
// same fake control socket, at 1 and 64 concurrent clients, each with a
// persistent connection of its own on both sides. Each iteration
// of b.N is one HTTP request and one direct call. Reported: both sides'
// requests per second and p50/p99 latency, and the transport's overhead per
// request (p50 difference at c=1; difference of the per-request wall time
// at c=64).
func BenchmarkTransportHTTP(b *testing.B) {
	rig := newTransportRig(b)
	for _, c := range []int{1, 64} {
		b.Run("clients="+strconv.Itoa(c), func(b *testing.B) {
			direct := make([]*directClient, c)
			clients := make([]*httpClient, c)
			for i := range direct {
				direct[i] = dialDirect(b, rig.d.Path())
				clients[i] = rig.dialHTTP(b)
			}
			for i := 0; i < 200; i++ { // warm the pools and HTTP keep-alives
				clients[i%c].getStatus(b)
				direct[0].call(b, "daemon/status")
			}
			b.ResetTimer()
			httpLat, httpWall := runConcurrent(b.N, c, func(w int) { clients[w].getStatus(b) })
			directLat, directWall := runConcurrent(b.N, c, func(w int) { direct[w].call(b, "daemon/status") })
			b.StopTimer()
			httpRate := float64(b.N) / httpWall.Seconds()
			directRate := float64(b.N) / directWall.Seconds()
			b.ReportMetric(httpRate, "http-req/s")
			b.ReportMetric(directRate, "direct-req/s")
			b.ReportMetric(us(percentile(httpLat, 50)), "http-p50-µs")
			b.ReportMetric(us(percentile(httpLat, 99)), "http-p99-µs")
			b.ReportMetric(us(percentile(directLat, 50)), "direct-p50-µs")
			b.ReportMetric(us(percentile(directLat, 99)), "direct-p99-µs")
			overhead := us(percentile(httpLat, 50) - percentile(directLat, 50))
			if c > 1 {
				overhead = (1/httpRate - 1/directRate) * 1e6
			}
			b.ReportMetric(overhead, "overhead-µs/req")
		})
	}
}

// BenchmarkTransportSSELatency measures how long a daemon event takes from
// the fake daemon publishing it to an SSE client reading it through
// animus-transport-http, next to a daemon/events subscriber on the socket
// itself.
func BenchmarkTransportSSELatency(b *testing.B) {
	rig := newTransportRig(b)
	resp, err := rig.client.Get(rig.base + "/api/v1/daemon/events")
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("open SSE: %v", err)
	}
	b.Cleanup(func() { resp.Body.Close() })
	sse := bufio.NewReader(resp.Body)
	direct := dialDirect(b, rig.d.Path())
	direct.call(b, "daemon/events") // the ack
	waitStreams(b, rig.d, 2)

	next := func(r *bufio.Reader, marker string) {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				b.Fatal(err)
			}
			if strings.Contains(line, marker) {
				return
			}
		}
	}
	sseLat := make([]time.Duration, 0, b.N)
	directLat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		marker := fmt.Sprintf(`"seq":%d}`, i)
		t0 := time.Now()
		rig.d.EmitEvent(fakedaemon.Event{Kind: "bench", Payload: json.RawMessage(fmt.Sprintf(`{"seq":%d}`, i))})
		// Both subscribers get the event; read the direct one first, since
		// it cannot be later than the transport's, then the SSE one.
		next(direct.r, marker)
		directLat = append(directLat, time.Since(t0))
		next(sse, marker)
		sseLat = append(sseLat, time.Since(t0))
	}
	b.StopTimer()
	b.ReportMetric(us(percentile(sseLat, 50)), "sse-p50-µs")
	b.ReportMetric(us(percentile(sseLat, 99)), "sse-p99-µs")
	b.ReportMetric(us(percentile(directLat, 50)), "direct-p50-µs")
	b.ReportMetric(us(percentile(directLat, 99)), "direct-p99-µs")
}

func waitStreams(b *testing.B, d *fakedaemon.Daemon, n int) {
	deadline := time.Now().Add(5 * time.Second)
	for d.ActiveStreams() != n {
		if time.Now().After(deadline) {
			b.Fatalf("%d streams open, want %d", d.ActiveStreams(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
