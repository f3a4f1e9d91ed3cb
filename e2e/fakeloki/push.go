package fakeloki

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/golang/snappy"
	"google.golang.org/protobuf/encoding/protowire"
)

// maxPushBody bounds a (decompressed) push body.
const maxPushBody = 64 << 20

// pushStream is one decoded stream of a push request.
type pushStream struct {
	labels  map[string]string
	entries []Entry
}

func (s *Server) handlePush(w http.ResponseWriter, r *http.Request) {
	s.pushes.Add(1)
	streams, err := decodePush(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.notePush(len(streams))
	tenantID := tenantOf(r)
	var errs []string
	total := 0
	for _, ps := range streams {
		total += len(ps.entries)
		_, e := s.append(tenantID, ps.labels, ps.entries)
		errs = append(errs, e...)
	}
	if len(errs) > 0 {
		// Loki is not transactional: valid entries were stored; the 400
		// lists the first rejections and the ignored count.
		if len(errs) > 10 {
			errs = errs[:10]
		}
		msg := strings.Join(errs, "\n") + fmt.Sprintf("\nuser '%s', total ignored: %d out of %d", tenantID, len(errs), total)
		http.Error(w, msg, http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// decodePush reads a push body: JSON when Content-Type is application/json,
// otherwise snappy-compressed protobuf (Loki's default). Content-Encoding
// gzip is undone first.
func decodePush(r *http.Request) ([]pushStream, error) {
	var body io.Reader = r.Body
	switch strings.ToLower(r.Header.Get("Content-Encoding")) {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			return nil, fmt.Errorf("gzip: %v", err)
		}
		defer func() { _ = zr.Close() }()
		body = zr
	default:
		return nil, fmt.Errorf("unsupported Content-Encoding %q", r.Header.Get("Content-Encoding"))
	}
	raw, err := io.ReadAll(io.LimitReader(body, maxPushBody+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxPushBody {
		return nil, errors.New("push body too large")
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		return decodeJSONPush(raw)
	}
	dec, err := snappy.Decode(nil, raw)
	if err != nil {
		return nil, fmt.Errorf("snappy: %v", err)
	}
	return decodeProtoPush(dec)
}

type jsonPush struct {
	Streams []struct {
		Stream map[string]string   `json:"stream"`
		Values [][]json.RawMessage `json:"values"`
	} `json:"streams"`
}

func decodeJSONPush(raw []byte) ([]pushStream, error) {
	var req jsonPush
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, fmt.Errorf("loghttp.PushRequest: %v", err)
	}
	out := make([]pushStream, 0, len(req.Streams))
	for _, st := range req.Streams {
		ps := pushStream{labels: st.Stream}
		if ps.labels == nil {
			ps.labels = map[string]string{}
		}
		for _, v := range st.Values {
			if len(v) < 2 || len(v) > 3 {
				return nil, fmt.Errorf("entry must be [\"<ns>\", \"<line>\"] or with structured metadata, got %d elements", len(v))
			}
			var tsStr, line string
			if err := json.Unmarshal(v[0], &tsStr); err != nil {
				return nil, fmt.Errorf("timestamp must be a string of unix nanoseconds: %s", v[0])
			}
			ns, err := strconv.ParseInt(tsStr, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("invalid timestamp %q: %v", tsStr, err)
			}
			if err := json.Unmarshal(v[1], &line); err != nil {
				return nil, fmt.Errorf("line must be a string: %v", err)
			}
			e := Entry{TS: time.Unix(0, ns), Line: line}
			if len(v) == 3 {
				if err := json.Unmarshal(v[2], &e.SM); err != nil {
					return nil, fmt.Errorf("structured metadata must be an object of strings: %v", err)
				}
				if len(e.SM) == 0 {
					e.SM = nil
				}
			}
			ps.entries = append(ps.entries, e)
		}
		out = append(out, ps)
	}
	return out, nil
}

// decodeProtoPush hand-decodes logproto.PushRequest:
//
//	PushRequest   { repeated StreamAdapter streams = 1; }
//	StreamAdapter { string labels = 1; repeated EntryAdapter entries = 2; uint64 hash = 3; }
//	EntryAdapter  { Timestamp timestamp = 1; string line = 2; repeated LabelPairAdapter structuredMetadata = 3; }
//	LabelPairAdapter { string name = 1; string value = 2; }
//	Timestamp     { int64 seconds = 1; int32 nanos = 2; }
func decodeProtoPush(b []byte) ([]pushStream, error) {
	var out []pushStream
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != 1 || typ != protowire.BytesType {
			return nil
		}
		ps, err := decodeProtoStream(v)
		if err != nil {
			return err
		}
		out = append(out, ps)
		return nil
	})
	return out, err
}

func decodeProtoStream(b []byte) (pushStream, error) {
	var ps pushStream
	var labelStr string
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			labelStr = string(v)
		case num == 2 && typ == protowire.BytesType:
			e, err := decodeProtoEntry(v)
			if err != nil {
				return err
			}
			ps.entries = append(ps.entries, e)
		}
		return nil
	})
	if err != nil {
		return ps, err
	}
	ps.labels, err = parseLabelString(labelStr)
	if err != nil {
		return ps, fmt.Errorf("error parsing labels '%s' with error: %v", labelStr, err)
	}
	return ps, nil
}

func decodeProtoEntry(b []byte) (Entry, error) {
	var e Entry
	var sec, nanos int64
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			return eachField(v, func(n protowire.Number, t protowire.Type, _ []byte, x uint64) error {
				if t == protowire.VarintType && n == 1 {
					sec = int64(x)
				}
				if t == protowire.VarintType && n == 2 {
					nanos = int64(int32(x))
				}
				return nil
			})
		case 2:
			e.Line = string(v)
		case 3:
			var name, value string
			if err := eachField(v, func(n protowire.Number, t protowire.Type, s []byte, _ uint64) error {
				if t == protowire.BytesType && n == 1 {
					name = string(s)
				}
				if t == protowire.BytesType && n == 2 {
					value = string(s)
				}
				return nil
			}); err != nil {
				return err
			}
			if e.SM == nil {
				e.SM = map[string]string{}
			}
			e.SM[name] = value
		}
		return nil
	})
	e.TS = time.Unix(sec, nanos)
	return e, err
}

// eachField walks the fields of one protobuf message. fn gets the payload
// of length-delimited fields and the value of varint fields.
func eachField(b []byte, fn func(protowire.Number, protowire.Type, []byte, uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("protobuf: %v", protowire.ParseError(n))
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
			return fmt.Errorf("protobuf: %v", protowire.ParseError(n))
		}
		b = b[n:]
		if err := fn(num, typ, payload, x); err != nil {
			return err
		}
	}
	return nil
}

// parseLabelString parses a Prometheus-style label set `{a="b", c="d"}`
// (the protobuf labels field) using the LogQL selector lexer; only
// equality pairs are allowed.
func parseLabelString(s string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" || strings.TrimSpace(s) == "{}" {
		return map[string]string{}, nil
	}
	p := &parser{lex: lexer{src: s}}
	p.next()
	ms, err := p.selector()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		return nil, p.errorf("unexpected %s after labels", p.tok)
	}
	out := map[string]string{}
	for _, m := range ms {
		if m.op != "=" {
			return nil, fmt.Errorf("label %s: only = is allowed in a label set", m.name)
		}
		if _, dup := out[m.name]; dup {
			return nil, fmt.Errorf("duplicate label name %q", m.name)
		}
		out[m.name] = m.value
	}
	return out, nil
}

// EncodeProtoPush builds a snappy-compressed logproto.PushRequest body
// from streams (label string → entries). It is exported for tests and
// benchmarks that want to push the way Promtail/Alloy do.
func EncodeProtoPush(streams map[string][]Entry) []byte {
	var req []byte
	for labels, entries := range streams {
		var st []byte
		st = protowire.AppendTag(st, 1, protowire.BytesType)
		st = protowire.AppendString(st, labels)
		for _, e := range entries {
			var ts, en []byte
			ts = protowire.AppendTag(ts, 1, protowire.VarintType)
			ts = protowire.AppendVarint(ts, uint64(e.TS.Unix()))
			ts = protowire.AppendTag(ts, 2, protowire.VarintType)
			ts = protowire.AppendVarint(ts, uint64(e.TS.Nanosecond()))
			en = protowire.AppendTag(en, 1, protowire.BytesType)
			en = protowire.AppendBytes(en, ts)
			en = protowire.AppendTag(en, 2, protowire.BytesType)
			en = protowire.AppendString(en, e.Line)
			for _, k := range sortedKeys(e.SM) {
				var lp []byte
				lp = protowire.AppendTag(lp, 1, protowire.BytesType)
				lp = protowire.AppendString(lp, k)
				lp = protowire.AppendTag(lp, 2, protowire.BytesType)
				lp = protowire.AppendString(lp, e.SM[k])
				en = protowire.AppendTag(en, 3, protowire.BytesType)
				en = protowire.AppendBytes(en, lp)
			}
			st = protowire.AppendTag(st, 2, protowire.BytesType)
			st = protowire.AppendBytes(st, en)
		}
		req = protowire.AppendTag(req, 1, protowire.BytesType)
		req = protowire.AppendBytes(req, st)
	}
	return snappy.Encode(nil, req)
}
