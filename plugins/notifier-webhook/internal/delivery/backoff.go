package delivery

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/config"
)

// Backoff is the delay before the next attempt after attempts failed
// ones. A receiver's Retry-After wins when it sent one (bounded by the
// policy's max delay, so a hostile or broken receiver cannot park a
// delivery for a year). Otherwise it is full jitter: uniform in
// [0, min(max, base·2^(attempts-1))], which spreads the retries of many
// rows that failed together instead of sending them back in lockstep.
// random returns a value in [0, 1).
func Backoff(p config.RetryPolicy, attempts int, retryAfter time.Duration, random func() float64) time.Duration {
	maxDelay := time.Duration(p.MaxDelaySecs) * time.Second
	if retryAfter > 0 {
		return min(retryAfter, maxDelay)
	}
	exp := float64(p.BaseDelaySecs) * math.Pow(2, float64(max(attempts-1, 0)))
	ceiling := min(time.Duration(exp*float64(time.Second)), maxDelay)
	if exp*float64(time.Second) > float64(math.MaxInt64) {
		ceiling = maxDelay
	}
	return time.Duration(random() * float64(ceiling))
}

// ParseRetryAfter reads a Retry-After value: delay-seconds or an HTTP date.
// It reports false for an absent or unparseable value; a date in the past
// is a zero delay.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > math.MaxInt64/int64(time.Second) {
			return time.Duration(math.MaxInt64), true
		}
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
