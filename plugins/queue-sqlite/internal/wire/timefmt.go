package wire

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Timestamp renders t as chrono's to_rfc3339() does for the timestamps the
// reference plugins generate (enqueued_at, assigned_at, held_at,
// next_run_at): UTC, offset "+00:00", and a fraction of 0, 3, 6 or 9 digits
// that shows every non-zero sub-second digit (queue.md §1.7).
func Timestamp(t time.Time) string { return rfc3339(t, "+00:00") }

// TimestampZ renders t as serde renders a DateTime<Utc>
// (SubjectDispatch.requested_at): the same fraction rule with "Z".
func TimestampZ(t time.Time) string { return rfc3339(t, "Z") }

func rfc3339(t time.Time, offset string) string {
	t = t.UTC()
	var b strings.Builder
	b.Grow(35)
	b.WriteString(t.Format("2006-01-02T15:04:05"))
	switch ns := t.Nanosecond(); {
	case ns == 0:
	case ns%1_000_000 == 0:
		fmt.Fprintf(&b, ".%03d", ns/1_000_000)
	case ns%1_000 == 0:
		fmt.Fprintf(&b, ".%06d", ns/1_000)
	default:
		fmt.Fprintf(&b, ".%09d", ns)
	}
	b.WriteString(offset)
	return b.String()
}

var errTimestamp = errors.New("not an RFC 3339 timestamp")

// ParseTime parses an RFC 3339 timestamp as chrono does for DateTime<Utc>:
// any offset (converted to UTC), "Z" or "z", and "T", "t" or a space between
// date and time.
func ParseTime(s string) (time.Time, error) {
	if len(s) < len("2006-01-02T15:04:05Z") {
		return time.Time{}, errTimestamp
	}
	b := []byte(s)
	switch b[10] {
	case 'T':
	case 't', ' ':
		b[10] = 'T'
	default:
		return time.Time{}, errTimestamp
	}
	if last := len(b) - 1; b[last] == 'z' {
		b[last] = 'Z'
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return time.Time{}, errTimestamp
	}
	return t.UTC(), nil
}
