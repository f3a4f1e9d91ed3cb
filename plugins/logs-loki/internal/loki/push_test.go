package loki

import (
	"bytes"
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"
)

func TestLabelString(t *testing.T) {
	got := LabelString([]Label{{"a", `x"y`}, {"b", `c\d`}})
	if want := `{a="x\"y", b="c\\d"}`; got != want {
		t.Fatalf("%s, want %s", got, want)
	}
}

// TestPushEncodingsRoundTrip decodes what both encodings send, with
// timestamps to the nanosecond (also before 1970) and structured metadata.
func TestPushEncodingsRoundTrip(t *testing.T) {
	streams := []Stream{
		{Labels: []Label{{"service_name", "animus"}}, Entries: []Entry{
			{TS: 1779042034123456789, Line: "one", SM: []Label{{"animus_id", "a"}, {"target", "t.x"}}},
			{TS: -1500000001, Line: "pre-epoch"},
			{TS: 0, Line: "epoch"},
		}},
		{Labels: []Label{{"level", "warn"}, {"service_name", "animus"}}, Entries: []Entry{{TS: 5, Line: "five"}}},
	}
	for _, enc := range []string{"protobuf", "json"} {
		t.Run(enc, func(t *testing.T) {
			var got []decoded
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var err error
				if got, err = decodeBody(r); err != nil {
					http.Error(w, err.Error(), 400)
					return
				}
				w.WriteHeader(204)
			}))
			defer srv.Close()
			c := client(t, srv.URL, Options{Encoding: enc})
			if err := c.Push(context.Background(), streams); err != nil {
				t.Fatal(err)
			}
			want := []struct {
				ts   int64
				line string
				sm   int
			}{{1779042034123456789, "one", 2}, {-1500000001, "pre-epoch", 0}, {0, "epoch", 0}, {5, "five", 0}}
			if len(got) != len(want) {
				t.Fatalf("%d entries", len(got))
			}
			for i, w := range want {
				if got[i].TS != w.ts || got[i].Line != w.line || len(got[i].SM) != w.sm {
					t.Errorf("entry %d: %+v, want %+v", i, got[i], w)
				}
			}
			if enc == "protobuf" && got[0].Labels != `{service_name="animus"}` {
				t.Errorf("labels %q", got[0].Labels)
			}
		})
	}
}

// TestEncoderReuse: an encoder reused after a larger push (as a Client
// reuses its encoders) renders exactly what a fresh one does, in both
// encodings, so nothing of an earlier batch leaks into a later body; and
// the body it returned earlier is not overwritten by the next push (the
// transport may still be reading it).
func TestEncoderReuse(t *testing.T) {
	large, small := sample(300), sample(2)
	small[0].Entries[1].SM = nil
	for _, enc := range []string{"protobuf", "json"} {
		t.Run(enc, func(t *testing.T) {
			reused := new(encoder)
			first, _, err := reused.encode(enc, large)
			if err != nil {
				t.Fatal(err)
			}
			kept := bytes.Clone(first)
			for _, streams := range [][]Stream{small, large, small} {
				got, hdr, err := reused.encode(enc, streams)
				if err != nil {
					t.Fatal(err)
				}
				want, wantHdr, err := EncodePush(enc, streams)
				if err != nil {
					t.Fatal(err)
				}
				if enc == "protobuf" && !bytes.Equal(got, want) {
					t.Fatalf("reused encoder: %d bytes differ from a fresh encoder's %d", len(got), len(want))
				}
				if hdr["Content-Type"] != wantHdr["Content-Type"] || hdr["Content-Encoding"] != wantHdr["Content-Encoding"] {
					t.Fatalf("headers %v, want %v", hdr, wantHdr)
				}
				gotEntries, err := decodeBytes(enc, got)
				if err != nil {
					t.Fatal(err)
				}
				wantEntries, err := decodeBytes(enc, want)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(gotEntries, wantEntries) || len(gotEntries) != countEntries(streams) {
					t.Fatalf("reused encoder decodes to %d entries, a fresh one to %d (want %d)", len(gotEntries), len(wantEntries), countEntries(streams))
				}
			}
			if !bytes.Equal(first, kept) {
				t.Fatal("a later push overwrote an earlier push's body")
			}
		})
	}
}

// decodeBytes decodes a push body of encoding enc as Loki would.
func decodeBytes(enc string, body []byte) ([]decoded, error) {
	r := httptest.NewRequest(http.MethodPost, "/loki/api/v1/push", bytes.NewReader(body))
	hdr := protoHeaders()
	if enc == "json" {
		hdr = jsonHeaders()
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	return decodeBody(r)
}

func countEntries(streams []Stream) int {
	n := 0
	for _, s := range streams {
		n += len(s.Entries)
	}
	return n
}

func client(t testing.TB, base string, o Options) *Client {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	o.BaseURL = u
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestHeadersAndErrors: tenant and auth on every request; a non-2xx
// answer is a *StatusError with Loki's message and Retry-After.
func TestHeadersAndErrors(t *testing.T) {
	var mu sync.Mutex
	var seen []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		w.Header().Set("Retry-After", "3")
		http.Error(w, "Ingestion rate limit exceeded", http.StatusTooManyRequests)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		o    Options
		auth string
	}{
		{Options{TenantID: "t1", Username: "u", Password: "p"}, "Basic dTpw"},
		{Options{TenantID: "t1", BearerToken: "tok"}, "Bearer tok"},
		{Options{}, ""},
	} {
		c := client(t, srv.URL, tc.o)
		err := c.Push(context.Background(), sample(1))
		se, ok := err.(*StatusError)
		if !ok || se.Status != 429 || se.Message != "Ingestion rate limit exceeded" || se.RetryAfter != 3*time.Second {
			t.Fatalf("err %#v", err)
		}
		mu.Lock()
		h := seen[len(seen)-1]
		mu.Unlock()
		if h.Get("Authorization") != tc.auth || h.Get("X-Scope-OrgID") != tc.o.TenantID {
			t.Errorf("headers %v, want auth %q tenant %q", h, tc.auth, tc.o.TenantID)
		}
	}
}

func TestTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	c := client(t, srv.URL, Options{Timeout: 100 * time.Millisecond})
	start := time.Now()
	if err := c.Ready(context.Background()); err == nil || time.Since(start) > time.Second {
		t.Fatalf("err %v after %s", err, time.Since(start))
	}
}

func TestQueryRangeDecodes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.Header.Get("X-Loki-Response-Encoding-Flags") != "categorize-labels" || q.Get("direction") != "backward" || q.Get("start") != "10" || q.Get("end") != "20" || q.Get("limit") != "7" {
			http.Error(w, "bad request "+r.URL.RawQuery, 400)
			return
		}
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"streams","result":[
			{"stream":{"level":"info"},"values":[["15","a",{"structuredMetadata":{"animus_id":"x"}}],["12","b"],["bad","c"]]}]}}`))
	}))
	defer srv.Close()
	res, err := client(t, srv.URL, Options{}).QueryRange(context.Background(), Range{Query: "{a=\"b\"}", Start: 10, End: 20, Limit: 7, Backward: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].TS != 15 || res[0].SM["animus_id"] != "x" || res[1].Line != "b" || res[0].Stream["level"] != "info" {
		t.Fatalf("%+v", res)
	}
}

func TestCAFile(t *testing.T) {
	if _, err := New(Options{BaseURL: &url.URL{Scheme: "https", Host: "x"}, CAFile: "/nonexistent"}); err == nil {
		t.Fatal("missing CA file accepted")
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ready")) }))
	defer srv.Close()
	if err := client(t, srv.URL, Options{}).Ready(context.Background()); err == nil {
		t.Fatal("untrusted certificate accepted")
	}
	if err := client(t, srv.URL, Options{InsecureSkipVerify: true}).Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := client(t, srv.URL, Options{CAFile: ca}).Ready(context.Background()); err != nil {
		t.Fatalf("CA file not trusted: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.pem")
	_ = os.WriteFile(empty, []byte("not a certificate"), 0o600)
	if _, err := New(Options{BaseURL: &url.URL{Scheme: "https", Host: "x"}, CAFile: empty}); err == nil {
		t.Fatal("a CA file without certificates was accepted")
	}
}
