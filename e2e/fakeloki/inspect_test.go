package fakeloki

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestRequestsToAndLastHeader: every request counts on its path, refused
// and failed ones too, and the latest one's headers are kept (as a copy).
func TestRequestsToAndLastHeader(t *testing.T) {
	s := newTestServer(t, Options{BearerToken: "tok"})
	get := func(path, auth, tenant string) int {
		req, _ := http.NewRequest(http.MethodGet, s.URL()+path, nil)
		req.Header.Set("Authorization", auth)
		req.Header.Set("X-Scope-OrgID", tenant)
		code, _ := do(t, req)
		return code
	}
	if s.RequestsTo(readyPath) != 0 || s.LastHeader(readyPath) != nil {
		t.Fatal("a path nobody asked for has traffic")
	}
	s.FailPath(readyPath, 1, 503, "")
	codes := []int{get(readyPath, "Bearer nope", "t1"), get(readyPath, "Bearer tok", "t2"), get(readyPath, "Bearer tok", "t3"), get("/loki/api/v1/labels", "Bearer tok", "t4")}
	if !reflect.DeepEqual(codes, []int{401, 503, 200, 200}) {
		t.Fatalf("codes %v", codes)
	}
	if n := s.RequestsTo(readyPath); n != 3 {
		t.Fatalf("%d requests to /ready", n)
	}
	h := s.LastHeader(readyPath)
	if h.Get("X-Scope-OrgID") != "t3" || h.Get("Authorization") != "Bearer tok" {
		t.Fatalf("last header %v", h)
	}
	h.Set("X-Scope-OrgID", "changed")
	if s.LastHeader(readyPath).Get("X-Scope-OrgID") != "t3" {
		t.Fatal("LastHeader returned the server's own map")
	}
}

// TestStreamsAndPushSizes: Streams returns what is stored per tenant
// (labels with the discovered service_name, entries oldest first with
// their structured metadata); StreamsPerPush counts each decoded push's
// streams.
func TestStreamsAndPushSizes(t *testing.T) {
	s := newTestServer(t, Options{})
	t0 := base.Add(-time.Minute)
	body := []byte(`{"streams":[` +
		`{"stream":{"app":"a"},"values":[["` + ns(t0.Add(time.Second)) + `","second"],["` + ns(t0) + `","first",{"k":"v"}]]},` +
		`{"stream":{"service_name":"svc"},"values":[["` + ns(t0) + `","other"]]}]}`)
	if code, msg := pushJSON(t, s, body); code != http.StatusNoContent {
		t.Fatalf("push %d %s", code, msg)
	}
	pushProto(t, s, map[string][]Entry{`{app="a"}`: {{TS: t0.Add(2 * time.Second), Line: "third"}}})
	pushJSON(t, s, []byte(`{"streams":`)) // undecodable: not a push
	pushJSON(t, s, jsonBody(map[string]string{"app": "a"}, []any{ns(t0), "elsewhere"}), withTenant("t1"))

	if got := s.StreamsPerPush(); !reflect.DeepEqual(got, []int{2, 1, 1}) {
		t.Fatalf("streams per push %v", got)
	}
	got := s.Streams("fake")
	want := []Stream{
		{Labels: map[string]string{"app": "a", "service_name": "a"}, Entries: []Entry{
			{TS: t0, Line: "first", SM: map[string]string{"k": "v"}}, {TS: t0.Add(time.Second), Line: "second"}, {TS: t0.Add(2 * time.Second), Line: "third"}}},
		{Labels: map[string]string{"service_name": "svc"}, Entries: []Entry{{TS: t0, Line: "other"}}},
	}
	if len(got) != len(want) {
		t.Fatalf("streams %+v", got)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i].Labels, want[i].Labels) || len(got[i].Entries) != len(want[i].Entries) {
			t.Fatalf("stream %d: %+v, want %+v", i, got[i], want[i])
		}
		for j, e := range want[i].Entries {
			g := got[i].Entries[j]
			if !g.TS.Equal(e.TS) || g.Line != e.Line || !reflect.DeepEqual(g.SM, e.SM) {
				t.Fatalf("stream %d entry %d: %+v, want %+v", i, j, g, e)
			}
		}
	}
	got[0].Labels["app"], got[0].Entries[0].SM["k"] = "x", "x"
	if again := s.Streams("fake"); again[0].Labels["app"] != "a" || again[0].Entries[0].SM["k"] != "v" {
		t.Fatal("Streams returned the store's own maps")
	}
	if other := s.Streams("t1"); len(other) != 1 || other[0].Entries[0].Line != "elsewhere" || len(s.Streams("t2")) != 0 {
		t.Fatalf("tenant t1 %+v", other)
	}
}

// TestTailStarts records where each accepted tail started: its start
// parameter, or Loki's default of an hour before now; refused tails are
// not recorded.
func TestTailStarts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := newTestServer(t, Options{})
	from := base.Add(-time.Minute)
	for _, q := range []url.Values{
		{"query": {`{app="a"}`}, "start": {ns(from)}},
		{"query": {`{app="a"}`}},
		{"query": {`{app=~".*"}`}}, // refused: selects nothing
	} {
		if c, _, err := dialTail(t, ctx, s, q, nil); err == nil {
			_ = c.CloseNow()
		}
	}
	got := s.TailStarts()
	if len(got) != 2 || !got[0].Equal(from) || !got[1].Equal(base.Add(-time.Hour)) {
		t.Fatalf("tail starts %v", got)
	}
}

// TestTLS: with Options.TLS the server speaks HTTPS with a certificate
// clients must be told to trust.
func TestTLS(t *testing.T) {
	s := newTestServer(t, Options{TLS: true})
	if !strings.HasPrefix(s.URL(), "https://127.0.0.1:") || s.Certificate() == nil {
		t.Fatalf("url %s", s.URL())
	}
	if resp, err := http.Get(s.URL() + readyPath); err == nil {
		_ = resp.Body.Close()
		t.Fatal("an untrusted certificate was accepted")
	}
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest(http.MethodGet, s.URL()+readyPath, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("ready over TLS: %d", resp.StatusCode)
	}
	if plain := newTestServer(t, Options{}); plain.Certificate() != nil {
		t.Fatal("a plain server has a certificate")
	}
}
