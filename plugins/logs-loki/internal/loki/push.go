package loki

import (
	"compress/gzip"
	"context"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/golang/snappy"
	"google.golang.org/protobuf/encoding/protowire"
)

// Label is one name/value pair (stream label or structured metadata).
type Label struct{ Name, Value string }

// Entry is one log line to push.
type Entry struct {
	TS   int64 // Unix nanoseconds
	Line string
	SM   []Label // structured metadata, nil for none
}

// Stream is one label set and its entries.
type Stream struct {
	Labels  []Label // sorted by name
	Entries []Entry
}

// LabelString renders labels in Prometheus text form {a="b", c="d"}, the
// protobuf PushRequest's labels field.
func LabelString(ls []Label) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, l := range ls {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(l.Name)
		b.WriteByte('=')
		b.WriteString(strconv.Quote(l.Value))
	}
	b.WriteByte('}')
	return b.String()
}

// Push sends streams in one request. It returns nil on 2xx.
func (c *Client) Push(ctx context.Context, streams []Stream) error {
	enc := c.encoder()
	body, hdr, err := enc.encode(c.o.Encoding, streams)
	c.putEncoder(enc)
	if err != nil {
		return err
	}
	_, err = c.doURL(ctx, http.MethodPost, c.pushURL, body, hdr)
	return err
}

// encoder is the working memory of push encoding, reused from push to
// push by a Client: the uncompressed message (the size of the batch's
// lines, ~200 KB for 500 daemon events), protobuf's per-stream scratch,
// and the JSON path's gzip compressor (~1 MB to make at BestSpeed).
// Reallocating them per push was about half of a 500-entry store's
// garbage, and with it half its GC cycles. The compressed body is never
// kept: the HTTP transport may still read it after Do returns.
type encoder struct {
	raw, stream []byte
	zw          *gzip.Writer
}

// encode renders the push body of streams in encoding ("json", else
// protobuf) and its headers. The body is freshly allocated; the encoder's
// buffers are free again when encode returns.
func (e *encoder) encode(encoding string, streams []Stream) ([]byte, map[string]string, error) {
	if encoding != "json" {
		e.raw, e.stream = appendProto(e.raw[:0], e.stream[:0], streams)
		return snappy.Encode(make([]byte, snappy.MaxEncodedLen(len(e.raw))), e.raw), protoHeaders(), nil
	}
	if e.zw == nil {
		e.zw, _ = gzip.NewWriterLevel(nil, gzip.BestSpeed)
	}
	e.raw = appendJSONPush(slices.Grow(e.raw[:0], jsonSize(streams)), streams)
	body, err := gzipBytes(e.zw, e.raw)
	return body, jsonHeaders(), err
}

func protoHeaders() map[string]string {
	return map[string]string{"Content-Type": "application/x-protobuf"}
}

func jsonHeaders() map[string]string {
	return map[string]string{"Content-Type": "application/json", "Content-Encoding": "gzip"}
}

// EncodePush renders a push body and its headers in the given encoding.
func EncodePush(encoding string, streams []Stream) ([]byte, map[string]string, error) {
	return new(encoder).encode(encoding, streams)
}

// appendProto renders logproto.PushRequest, which encode compresses with
// snappy (block format), as Promtail and Alloy do:
//
//	PushRequest      { repeated StreamAdapter streams = 1; }
//	StreamAdapter    { string labels = 1; repeated EntryAdapter entries = 2; }
//	EntryAdapter     { google.protobuf.Timestamp timestamp = 1; string line = 2;
//	                   repeated LabelPairAdapter structuredMetadata = 3; }
//	LabelPairAdapter { string name = 1; string value = 2; }
//	Timestamp        { int64 seconds = 1; int32 nanos = 2; }
//
// It appends the uncompressed PushRequest of streams to req, rendering
// each stream in st first (its length prefix comes before it), and
// returns both buffers for reuse; encode compresses the result.
func appendProto(req, st []byte, streams []Stream) ([]byte, []byte) {
	// Size the buffer once: growing a 1 MB request by appends costs
	// more than encoding it.
	size := 0
	for _, s := range streams {
		size += 64 + len(s.Labels)*32
		for _, e := range s.Entries {
			size += len(e.Line) + 32
			for _, l := range e.SM {
				size += len(l.Name) + len(l.Value) + 8
			}
		}
	}
	req = slices.Grow(req, size)
	var en, sub []byte
	for _, s := range streams {
		st = protowire.AppendTag(st[:0], 1, protowire.BytesType)
		st = protowire.AppendString(st, LabelString(s.Labels))
		for _, e := range s.Entries {
			en = en[:0]
			sec, nanos := e.TS/1e9, e.TS%1e9
			if nanos < 0 { // keep nanos in [0, 1e9) for pre-1970 times
				sec, nanos = sec-1, nanos+1e9
			}
			sub = sub[:0]
			if sec != 0 {
				sub = protowire.AppendTag(sub, 1, protowire.VarintType)
				sub = protowire.AppendVarint(sub, uint64(sec))
			}
			if nanos != 0 {
				sub = protowire.AppendTag(sub, 2, protowire.VarintType)
				sub = protowire.AppendVarint(sub, uint64(nanos))
			}
			en = protowire.AppendTag(en, 1, protowire.BytesType)
			en = protowire.AppendBytes(en, sub)
			en = protowire.AppendTag(en, 2, protowire.BytesType)
			en = protowire.AppendString(en, e.Line)
			for _, l := range e.SM {
				sub = sub[:0]
				sub = protowire.AppendTag(sub, 1, protowire.BytesType)
				sub = protowire.AppendString(sub, l.Name)
				sub = protowire.AppendTag(sub, 2, protowire.BytesType)
				sub = protowire.AppendString(sub, l.Value)
				en = protowire.AppendTag(en, 3, protowire.BytesType)
				en = protowire.AppendBytes(en, sub)
			}
			st = protowire.AppendTag(st, 2, protowire.BytesType)
			st = protowire.AppendBytes(st, en)
		}
		req = protowire.AppendTag(req, 1, protowire.BytesType)
		req = protowire.AppendBytes(req, st)
	}
	return req, st
}

// SortLabels orders labels by name, as LabelString expects.
func SortLabels(ls []Label) {
	sort.Slice(ls, func(i, j int) bool { return ls[i].Name < ls[j].Name })
}
