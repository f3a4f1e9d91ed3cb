package delivery

import (
	"net/http"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/config"
)

func TestBackoff(t *testing.T) {
	p := config.RetryPolicy{MaxAttempts: 10, BaseDelaySecs: 2, MaxDelaySecs: 60}
	top := func() float64 { return 0.999999 }
	cases := []struct {
		attempts   int
		retryAfter time.Duration
		random     func() float64
		want       time.Duration
	}{
		{1, 0, top, 2 * time.Second},
		{2, 0, top, 4 * time.Second},
		{4, 0, top, 16 * time.Second},
		{10, 0, top, 60 * time.Second}, // capped
		{60, 0, top, 60 * time.Second}, // no overflow
		{3, 0, func() float64 { return 0 }, 0},
		{3, 0, func() float64 { return 0.5 }, 4 * time.Second},
		{1, 30 * time.Second, top, 30 * time.Second}, // Retry-After wins
		{1, time.Hour, top, 60 * time.Second},        // but is capped
	}
	for _, c := range cases {
		got := Backoff(p, c.attempts, c.retryAfter, c.random)
		if d := got - c.want; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("Backoff(attempts %d, retry-after %v) = %v, want %v", c.attempts, c.retryAfter, got, c.want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"5", 5 * time.Second, true},
		{" 12 ", 12 * time.Second, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
	}
	for _, c := range cases {
		got, ok := ParseRetryAfter(c.in, now)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseRetryAfter(%q) = %v %v, want %v %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
