package loki

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/golang/snappy"
	"google.golang.org/protobuf/encoding/protowire"
)

// decoded is a push body read back by the test sink.
type decoded struct {
	Labels string
	TS     int64
	Line   string
	SM     map[string]string
}

// decodeBody reads a push request as Loki would: JSON (gzip) or
// snappy protobuf.
func decodeBody(r *http.Request) ([]decoded, error) {
	if r.Header.Get("Content-Type") == "application/json" {
		var rd io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				return nil, err
			}
			rd = zr
		}
		var body struct {
			Streams []struct {
				Stream map[string]string   `json:"stream"`
				Values [][]json.RawMessage `json:"values"`
			} `json:"streams"`
		}
		if err := json.NewDecoder(rd).Decode(&body); err != nil {
			return nil, err
		}
		var out []decoded
		for _, s := range body.Streams {
			for _, v := range s.Values {
				var d decoded
				var ts string
				_ = json.Unmarshal(v[0], &ts)
				d.TS, _ = strconv.ParseInt(ts, 10, 64)
				_ = json.Unmarshal(v[1], &d.Line)
				if len(v) > 2 {
					_ = json.Unmarshal(v[2], &d.SM)
				}
				d.Labels = fmt.Sprint(len(s.Stream))
				out = append(out, d)
			}
		}
		return out, nil
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	pb, err := snappy.Decode(nil, raw)
	if err != nil {
		return nil, err
	}
	return decodeProto(pb)
}

func fields(b []byte, fn func(protowire.Number, protowire.Type, []byte, uint64)) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var payload []byte
		var x uint64
		switch typ {
		case protowire.BytesType:
			payload, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		fn(num, typ, payload, x)
	}
	return nil
}

func decodeProto(pb []byte) ([]decoded, error) {
	var out []decoded
	var ferr error
	err := fields(pb, func(num protowire.Number, _ protowire.Type, stream []byte, _ uint64) {
		if num != 1 {
			return
		}
		var labels string
		var entries [][]byte
		_ = fields(stream, func(n protowire.Number, _ protowire.Type, v []byte, _ uint64) {
			switch n {
			case 1:
				labels = string(v)
			case 2:
				entries = append(entries, v)
			}
		})
		for _, e := range entries {
			d := decoded{Labels: labels}
			var sec, nanos int64
			if err := fields(e, func(n protowire.Number, _ protowire.Type, v []byte, _ uint64) {
				switch n {
				case 1:
					_ = fields(v, func(n protowire.Number, _ protowire.Type, _ []byte, x uint64) {
						if n == 1 {
							sec = int64(x)
						} else if n == 2 {
							nanos = int64(int32(x))
						}
					})
				case 2:
					d.Line = string(v)
				case 3:
					var name, value string
					_ = fields(v, func(n protowire.Number, _ protowire.Type, s []byte, _ uint64) {
						if n == 1 {
							name = string(s)
						} else if n == 2 {
							value = string(s)
						}
					})
					if d.SM == nil {
						d.SM = map[string]string{}
					}
					d.SM[name] = value
				}
			}); err != nil {
				ferr = err
			}
			d.TS = sec*1e9 + nanos
			out = append(out, d)
		}
	})
	if err == nil {
		err = ferr
	}
	return out, err
}

func sample(n int) []Stream {
	labels := []Label{{"level", "info"}, {"service_name", "animus"}, {"source", "daemon"}}
	s := Stream{Labels: labels}
	for i := range n {
		line := fmt.Sprintf(`{"id":"%08d-4b7e-4c1e-9f7a-2d0c9b1e6a55","ts":"2026-05-17T18:20:34.123456789Z","level":"info","source":"daemon","target":"daemon.events.task-created","message":"task-created","fields":{"seq":%d,"data":{"task":"T-%d","title":"Refactor the scheduler"},"schema":"animus.daemon.event.v1","project_root":"/srv/project"}}`, i, i, i)
		s.Entries = append(s.Entries, Entry{TS: 1779042034123456789 + int64(i), Line: line,
			SM: []Label{{"animus_id", strings.Repeat("x", 36)}, {"target", "daemon.events.task-created"}}})
	}
	return []Stream{s}
}
