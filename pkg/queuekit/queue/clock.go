package queue

import (
	"crypto/rand"
	"encoding/hex"
	"math"
	"math/big"
	"time"
)

// Instants are compared in SQLite as UTC nanoseconds. int64 nanoseconds
// span 1677–2262; anything outside is clamped, which keeps every
// comparison right (a run_at in 9999 is deferred for as long as anyone
// will look, one in 1600 is due).
var (
	minInstant = time.Unix(0, math.MinInt64)
	maxInstant = time.Unix(0, math.MaxInt64)
)

func unixNS(t time.Time) int64 {
	switch {
	case t.Before(minInstant):
		return math.MinInt64
	case t.After(maxInstant):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// expiryNS is run_at + grace seconds in UTC nanoseconds, computed exactly
// for any u64 grace. nil means never: the sum lies beyond 2262, which is
// how the u64 overflow values of queue.md §3.5.4 come out.
func expiryNS(runAt time.Time, graceSecs uint64) *int64 {
	nsPerSecond := big.NewInt(int64(time.Second))
	sum := new(big.Int).Mul(big.NewInt(runAt.Unix()), nsPerSecond)
	sum.Add(sum, big.NewInt(int64(runAt.Nanosecond())))
	grace := new(big.Int).Mul(new(big.Int).SetUint64(graceSecs), nsPerSecond)
	sum.Add(sum, grace)
	if !sum.IsInt64() {
		if sum.Sign() > 0 {
			return nil
		}
		v := int64(math.MinInt64)
		return &v
	}
	v := sum.Int64()
	return &v
}

// addNS is a+d clamped to the int64 range.
func addNS(a int64, d time.Duration) int64 {
	if d > 0 && a > math.MaxInt64-int64(d) {
		return math.MaxInt64
	}
	return a + int64(d)
}

// newUUID returns a random lower-case hyphenated UUID v4, the references'
// entry and workflow id format.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}
