package fakeloki

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func get(t *testing.T, s *Server, path string, hdr ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.URL()+path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return do(t, req)
}

func TestReadyAndLabels(t *testing.T) {
	s := newTestServer(t, Options{})
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Fatalf("url %s", s.URL())
	}
	if code, body := get(t, s, "/ready"); code != 200 || body != "ready" {
		t.Fatalf("%d %q", code, body)
	}
	pushJSON(t, s, jsonBody(map[string]string{"service_name": "animus", "level": "info"}, []any{ns(base), "x", map[string]string{"sm": "v"}}))
	code, body := get(t, s, "/loki/api/v1/labels")
	var lr struct {
		Status string   `json:"status"`
		Data   []string `json:"data"`
	}
	_ = json.Unmarshal([]byte(body), &lr)
	if code != 200 || lr.Status != "success" || !reflect.DeepEqual(lr.Data, []string{"level", "service_name"}) {
		t.Fatalf("%d %s", code, body)
	}
}

func TestTenancy(t *testing.T) {
	lbl := map[string]string{"app": "a"}
	t.Run("isolated", func(t *testing.T) {
		s := newTestServer(t, Options{})
		pushJSON(t, s, jsonBody(lbl, []any{ns(base.Add(-time.Second)), "one"}), withTenant("t1"))
		pushJSON(t, s, jsonBody(lbl, []any{ns(base.Add(-time.Second)), "two"}), withTenant("t2"))
		pushJSON(t, s, jsonBody(lbl, []any{ns(base.Add(-time.Second)), "none"}))
		for tenant, want := range map[string]string{"t1": "one", "t2": "two", "": "none"} {
			var hdr []string
			if tenant != "" {
				hdr = []string{"X-Scope-OrgID", tenant}
			}
			_, _, qr := queryRange(t, s, rangeOf(`{app="a"}`), hdr...)
			if got := qr.lines(); !reflect.DeepEqual(got, []string{want}) {
				t.Errorf("tenant %q: %v", tenant, got)
			}
		}
		if s.Entries("t1") != 1 || s.Entries("fake") != 1 || s.Entries("t3") != 0 {
			t.Fatal("counters")
		}
	})
	t.Run("required", func(t *testing.T) {
		s := newTestServer(t, Options{RequireTenant: true})
		code, body := pushJSON(t, s, jsonBody(lbl, []any{ns(base), "x"}))
		if code != http.StatusUnauthorized || !strings.Contains(body, "no org id") {
			t.Fatalf("%d %s", code, body)
		}
		if code, _ := get(t, s, "/ready"); code != 200 {
			t.Fatal("ready must not need a tenant")
		}
		if code, _ := pushJSON(t, s, jsonBody(lbl, []any{ns(base), "x"}), withTenant("t1")); code != http.StatusNoContent {
			t.Fatal(code)
		}
	})
}

func TestAuth(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		set  func(*http.Request)
		want int
	}{
		{"basic ok", Options{BasicAuthUser: "u", BasicAuthPassword: "p"}, func(r *http.Request) { r.SetBasicAuth("u", "p") }, 200},
		{"basic wrong", Options{BasicAuthUser: "u", BasicAuthPassword: "p"}, func(r *http.Request) { r.SetBasicAuth("u", "x") }, 401},
		{"basic missing", Options{BasicAuthUser: "u", BasicAuthPassword: "p"}, func(*http.Request) {}, 401},
		{"bearer ok", Options{BearerToken: "tok"}, func(r *http.Request) { r.Header.Set("Authorization", "Bearer tok") }, 200},
		{"bearer wrong", Options{BearerToken: "tok"}, func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") }, 401},
		{"none configured", Options{}, func(*http.Request) {}, 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t, tc.opts)
			req, _ := http.NewRequest(http.MethodGet, s.URL()+"/loki/api/v1/labels", nil)
			tc.set(req)
			if code, body := do(t, req); code != tc.want {
				t.Fatalf("%d %s", code, body)
			}
		})
	}
}

func TestFaults(t *testing.T) {
	body := jsonBody(map[string]string{"app": "a"}, []any{ns(base), "x"})
	for _, status := range []int{429, 500, 502, 503} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			s := newTestServer(t, Options{})
			s.FailNext(2, status)
			for i := 0; i < 2; i++ {
				code, msg := pushJSON(t, s, body)
				if code != status {
					t.Fatalf("attempt %d: %d", i, code)
				}
				if status == 429 && !strings.Contains(msg, "Ingestion rate limit exceeded") {
					t.Fatalf("429 body %q", msg)
				}
			}
			if code, _ := pushJSON(t, s, body); code != http.StatusNoContent {
				t.Fatalf("third push %d", code)
			}
			if s.Pushes() != 1 || s.Requests() != 3 || s.Entries("fake") != 1 {
				t.Fatalf("pushes %d requests %d entries %d", s.Pushes(), s.Requests(), s.Entries("fake"))
			}
		})
	}
	t.Run("latency", func(t *testing.T) {
		s := newTestServer(t, Options{})
		s.SetLatency(150 * time.Millisecond)
		start := time.Now()
		if code, _ := get(t, s, "/ready"); code != 200 {
			t.Fatal(code)
		}
		if d := time.Since(start); d < 150*time.Millisecond {
			t.Fatalf("latency %v", d)
		}
		s.SetLatency(0)
		start = time.Now()
		get(t, s, "/ready")
		if d := time.Since(start); d > 100*time.Millisecond {
			t.Fatalf("latency still applied: %v", d)
		}
	})
}

func TestStartWithoutTest(t *testing.T) {
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	url := s.URL()
	s.Close()
	if _, err := http.Get(url + "/ready"); err == nil {
		t.Fatal("server still answering after Close")
	}
}
