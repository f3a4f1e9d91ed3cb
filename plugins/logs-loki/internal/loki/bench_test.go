package loki

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
)

// BenchmarkPushEncoding compares the two push encodings end to end:
// encode, POST to an httptest sink that decodes the body as Loki would
// (snappy+protobuf or gzip+JSON), in batches of 1 and 500 daemon-event
// lines. It reports entries/s and wire bytes per entry; the README quotes
// the numbers and LOKI_PUSH_ENCODING's default follows them.
func BenchmarkPushEncoding(b *testing.B) {
	for _, enc := range []string{"protobuf", "json"} {
		for _, n := range []int{1, 500} {
			b.Run(enc+"/batch="+strconv.Itoa(n), func(b *testing.B) {
				var bytes atomic.Int64
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.ContentLength > 0 {
						bytes.Add(r.ContentLength)
					}
					if _, err := decodeBody(r); err != nil {
						http.Error(w, err.Error(), 400)
						return
					}
					_, _ = io.Copy(io.Discard, r.Body)
					w.WriteHeader(204)
				}))
				defer srv.Close()
				c := client(b, srv.URL, Options{Encoding: enc})
				streams := sample(n)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := c.Push(context.Background(), streams); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				entries := float64(b.N * n)
				b.ReportMetric(entries/b.Elapsed().Seconds(), "entries/s")
				b.ReportMetric(float64(bytes.Load())/entries, "wire-B/entry")
			})
		}
	}
}

// BenchmarkEncodeOnly isolates the encoders (no HTTP).
func BenchmarkEncodeOnly(b *testing.B) {
	streams := sample(500)
	for _, enc := range []string{"protobuf", "json"} {
		b.Run(enc, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, _, err := EncodePush(enc, streams); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*500)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}
