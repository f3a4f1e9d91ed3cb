package fakeloki

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// base is a fixed "now" for deterministic tests; entries sit just before.
var base = time.Date(2026, 5, 17, 18, 0, 0, 0, time.UTC)

func newTestServer(t *testing.T, o Options) *Server {
	t.Helper()
	if o.Now == nil {
		o.Now = func() time.Time { return base }
	}
	return New(t, o)
}

func ns(t time.Time) string { return strconv.FormatInt(t.UnixNano(), 10) }

// jsonBody builds a JSON push body: one stream, values [ts, line(, sm)].
func jsonBody(labels map[string]string, values ...[]any) []byte {
	b, _ := json.Marshal(map[string]any{"streams": []any{map[string]any{"stream": labels, "values": values}}})
	return b
}

func do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

type pushOpt func(*http.Request)

func withTenant(id string) pushOpt {
	return func(r *http.Request) { r.Header.Set("X-Scope-OrgID", id) }
}

func pushJSON(t *testing.T, s *Server, body []byte, opts ...pushOpt) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/loki/api/v1/push", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for _, o := range opts {
		o(req)
	}
	return do(t, req)
}

func pushGzipJSON(t *testing.T, s *Server, body []byte) (int, string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(body)
	_ = zw.Close()
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/loki/api/v1/push", &buf)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Encoding", "gzip")
	return do(t, req)
}

func pushProto(t *testing.T, s *Server, streams map[string][]Entry) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/loki/api/v1/push", bytes.NewReader(EncodeProtoPush(streams)))
	req.Header.Set("Content-Type", "application/x-protobuf")
	return do(t, req)
}

// queryResp is Loki's query_range response.
type queryResp struct {
	Status string `json:"status"`
	Data   struct {
		ResultType    string   `json:"resultType"`
		EncodingFlags []string `json:"encodingFlags"`
		Result        []struct {
			Stream map[string]string   `json:"stream"`
			Values [][]json.RawMessage `json:"values"`
		} `json:"result"`
	} `json:"data"`
}

// lines flattens the values' lines in response order.
func (q queryResp) lines() []string {
	var out []string
	for _, r := range q.Data.Result {
		for _, v := range r.Values {
			var l string
			_ = json.Unmarshal(v[1], &l)
			out = append(out, l)
		}
	}
	return out
}

func queryRange(t *testing.T, s *Server, params url.Values, hdr ...string) (int, string, queryResp) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.URL()+"/loki/api/v1/query_range?"+params.Encode(), nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	code, body := do(t, req)
	var qr queryResp
	if code == http.StatusOK {
		if err := json.Unmarshal([]byte(body), &qr); err != nil {
			t.Fatalf("decode %s: %v", body, err)
		}
	}
	return code, body, qr
}

// rangeOf is a query over the hour before base.
func rangeOf(q string, extra ...string) url.Values {
	v := url.Values{"query": {q}, "start": {ns(base.Add(-time.Hour))}, "end": {ns(base)}}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Set(extra[i], extra[i+1])
	}
	return v
}
