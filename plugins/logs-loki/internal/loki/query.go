package loki

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// Result is one entry read back from Loki.
type Result struct {
	TS     int64
	Line   string
	Stream map[string]string // stream labels (with SM merged in when Loki did not categorize)
	SM     map[string]string // structured metadata, when categorized
}

// Range is a query_range request.
type Range struct {
	Query      string
	Start, End int64 // ns; start inclusive, end exclusive
	Limit      int
	Backward   bool
}

// QueryRange runs a log query. It asks for categorized labels so
// structured metadata arrives apart from stream labels.
func (c *Client) QueryRange(ctx context.Context, r Range) ([]Result, error) {
	dir := "forward"
	if r.Backward {
		dir = "backward"
	}
	q := url.Values{
		"query": {r.Query}, "start": {strconv.FormatInt(r.Start, 10)}, "end": {strconv.FormatInt(r.End, 10)},
		"limit": {strconv.Itoa(r.Limit)}, "direction": {dir},
	}
	body, err := c.do(ctx, http.MethodGet, "/loki/api/v1/query_range", q, nil,
		map[string]string{"X-Loki-Response-Encoding-Flags": "categorize-labels"})
	if err != nil {
		return nil, err
	}
	var resp struct {
		Status string `json:"status"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, fmt.Errorf("query_range: undecodable answer: %w", err)
	}
	if resp.Data.ResultType != "streams" {
		return nil, fmt.Errorf("query_range: resultType %q, want streams", resp.Data.ResultType)
	}
	return DecodeStreams(resp.Data.Result)
}

// DecodeStreams reads Loki's streams result (query_range data.result or a
// tail frame's streams): [{"stream":{…},"values":[["<ns>","<line>"(,{…})]]}].
func DecodeStreams(raw json.RawMessage) ([]Result, error) {
	var streams []struct {
		Stream map[string]string   `json:"stream"`
		Values [][]json.RawMessage `json:"values"`
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if err := json.Unmarshal(raw, &streams); err != nil {
		return nil, fmt.Errorf("undecodable streams: %w", err)
	}
	var out []Result
	for _, st := range streams {
		for _, v := range st.Values {
			if len(v) < 2 {
				continue
			}
			var tsStr string
			if json.Unmarshal(v[0], &tsStr) != nil {
				continue
			}
			ts, err := strconv.ParseInt(tsStr, 10, 64)
			if err != nil {
				continue
			}
			r := Result{TS: ts, Stream: st.Stream}
			if json.Unmarshal(v[1], &r.Line) != nil {
				continue
			}
			if len(v) > 2 {
				var meta struct {
					SM     map[string]string `json:"structuredMetadata"`
					Parsed map[string]string `json:"parsed"`
				}
				if json.Unmarshal(v[2], &meta) == nil {
					r.SM = meta.SM
				}
			}
			out = append(out, r)
		}
	}
	return out, nil
}
