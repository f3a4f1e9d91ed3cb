package notifierwebhook

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/webhooksig"
)

// received is one request a receiver saw and what it answered.
type received struct {
	at        time.Time
	status    int
	header    http.Header
	body      []byte
	verifyErr error // nil when the Standard Webhooks signature checked out
}

// receiver is a webhook endpoint on 127.0.0.1 answering a scripted status
// sequence (the last status repeats). It can go down and come back on the
// same address, and hold requests open.
type receiver struct {
	t      testing.TB
	addr   string
	secret string // Standard Webhooks secret to verify with ("" = skip)

	mu         sync.Mutex
	srv        *httptest.Server
	statuses   []int
	retryAfter string
	echo       bool          // answer with the request's path and headers
	hold       chan struct{} // when set, requests block until it closes
	got        []received
	arrived    chan struct{} // signalled on every request
}

func newReceiver(t testing.TB, secret string, statuses ...int) *receiver {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{t: t, addr: l.Addr().String(), secret: secret, statuses: statuses, arrived: make(chan struct{}, 1<<16)}
	r.serve(l)
	t.Cleanup(r.down)
	return r
}

// newDownReceiver reserves an address with nothing listening on it yet.
func newDownReceiver(t testing.TB, secret string, statuses ...int) *receiver {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r := &receiver{t: t, addr: addr, secret: secret, statuses: statuses, arrived: make(chan struct{}, 1<<16)}
	t.Cleanup(r.down)
	return r
}

func (r *receiver) url(path string) string { return "http://" + r.addr + path }

func (r *receiver) serve(l net.Listener) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(r.handle))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
}

// up starts listening on the reserved address.
func (r *receiver) up() {
	l, err := net.Listen("tcp", r.addr)
	if err != nil {
		r.t.Fatalf("receiver cannot come back on %s: %v", r.addr, err)
	}
	r.serve(l)
}

func (r *receiver) down() {
	r.mu.Lock()
	srv := r.srv
	r.srv = nil
	if r.hold != nil {
		select {
		case <-r.hold:
		default:
			close(r.hold)
		}
	}
	r.mu.Unlock()
	if srv != nil {
		srv.CloseClientConnections()
		srv.Close()
	}
}

func (r *receiver) handle(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	rec := received{at: time.Now(), header: req.Header.Clone(), body: body}
	if r.secret != "" {
		rec.verifyErr = webhooksig.VerifyStandard(r.secret, req.Header, body, time.Now(), 0)
	}
	r.mu.Lock()
	rec.status = r.statuses[min(len(r.got), len(r.statuses)-1)]
	hold, retryAfter, echo := r.hold, r.retryAfter, r.echo
	idx := len(r.got)
	r.got = append(r.got, rec)
	r.mu.Unlock()
	r.arrived <- struct{}{}
	if hold != nil {
		select {
		case <-hold:
		case <-req.Context().Done():
		}
		if req.Context().Err() != nil {
			// The client went away before an answer: status 0, not a
			// delivery.
			r.mu.Lock()
			r.got[idx].status = 0
			r.mu.Unlock()
			return
		}
	}
	if retryAfter != "" && (rec.status == 429 || rec.status == 503) {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.WriteHeader(rec.status)
	if echo {
		fmt.Fprintf(w, "you sent %s with %v", req.URL.Path, req.Header)
	}
}

// drainArrived forgets arrival signals of requests already seen.
func (r *receiver) drainArrived() {
	for {
		select {
		case <-r.arrived:
		default:
			return
		}
	}
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

func (r *receiver) setStatuses(s ...int) {
	r.mu.Lock()
	r.statuses = s
	r.got = r.got[:len(r.got):len(r.got)]
	r.mu.Unlock()
}

// deliveredIDs counts 2xx answers per Idempotency-Key.
func (r *receiver) deliveredIDs() map[string]int {
	out := map[string]int{}
	for _, rec := range r.requests() {
		if rec.status/100 == 2 {
			out[rec.header.Get("Idempotency-Key")]++
		}
	}
	return out
}
