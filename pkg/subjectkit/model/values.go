package model

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// Status is the normalized SubjectStatus (kebab-case on the wire).
type Status string

// The five statuses, in the order the schema lists them.
const (
	Ready      Status = "ready"
	InProgress Status = "in-progress"
	Blocked    Status = "blocked"
	Done       Status = "done"
	Cancelled  Status = "cancelled"
)

// Statuses is every status, for SubjectSchema.status_values.
var Statuses = []Status{Ready, InProgress, Blocked, Done, Cancelled}

// statusAliases are the spellings the CLI passes through from users
// (subject.md §7 A8). They are accepted on input only; output is always
// canonical.
var statusAliases = map[string]Status{
	"in_progress": InProgress, "inprogress": InProgress, "doing": InProgress,
	"completed": Done, "complete": Done, "closed": Done,
	"canceled": Cancelled,
	"todo":     Ready, "backlog": Ready, "open": Ready, "new": Ready,
}

// acceptedStatuses is the text every status error shows, so a caller can
// correct itself without reading the docs.
const acceptedStatuses = "ready, in-progress, blocked, done, cancelled " +
	"(aliases: in_progress, inprogress, doing, completed, complete, closed, canceled, todo, backlog, open, new)"

// ParseStatus accepts a canonical status or an alias, case-insensitively.
func ParseStatus(field, s string) (Status, error) {
	key := strings.ToLower(strings.TrimSpace(s))
	for _, st := range Statuses {
		if key == string(st) {
			return st, nil
		}
	}
	if st, ok := statusAliases[key]; ok {
		return st, nil
	}
	return "", inputErr(field, "invalid status %q for %s: accepted values are %s", s, field, acceptedStatuses)
}

// Valid reports whether s is one of the five canonical statuses.
func (s Status) Valid() bool {
	for _, st := range Statuses {
		if s == st {
			return true
		}
	}
	return false
}

// ChangeKind is SubjectChangedEvent.change_kind.
type ChangeKind string

// The change kinds (the last three are v0.1.1).
const (
	Created              ChangeKind = "created"
	Updated              ChangeKind = "updated"
	StatusChanged        ChangeKind = "status-changed"
	Deleted              ChangeKind = "deleted"
	DispatchLabelChanged ChangeKind = "dispatch-label-changed"
	AttachmentAdded      ChangeKind = "attachment-added"
	AttachmentRemoved    ChangeKind = "attachment-removed"
)

// priorityWords maps the words callers use to the 0..4 scale (0 none,
// 1 low, 2 medium, 3 high, 4 critical). The pN forms follow the common
// convention that P0 is the most urgent (as animus-subject-default's
// p0..p3 = critical..low); p4 is "none".
var priorityWords = map[string]int{
	"none": 0, "low": 1, "medium": 2, "normal": 2, "high": 3, "critical": 4, "urgent": 4,
	"p0": 4, "p1": 3, "p2": 2, "p3": 1, "p4": 0,
}

const acceptedPriorities = "an integer 0..4 (0 none, 1 low, 2 medium, 3 high, 4 critical), " +
	`the same as a string ("3"), or one of none, low, medium, normal, high, critical, urgent, p0 (critical) .. p3 (low), p4 (none)`

// ParsePriority decodes a priority given as a JSON integer or string. JSON
// null yields nil (no priority).
func ParsePriority(field string, raw json.RawMessage) (*int, error) {
	if rustjson.IsNull(raw) {
		return nil, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return priorityFromText(field, n.String())
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, inputErr(field, "invalid %s %s: accepted values are %s", field, raw, acceptedPriorities)
	}
	key := strings.ToLower(strings.TrimSpace(s))
	if p, ok := priorityWords[key]; ok {
		return &p, nil
	}
	return priorityFromText(field, key)
}

func priorityFromText(field, s string) (*int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 0 || p > 4 {
		return nil, inputErr(field, "invalid %s %q: accepted values are %s", field, s, acceptedPriorities)
	}
	return &p, nil
}

// ParseTime accepts any RFC 3339 timestamp (any offset, any fraction).
func ParseTime(field, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, inputErr(field, "invalid %s %q: want an RFC 3339 timestamp such as 2026-05-10T00:00:00Z", field, s)
	}
	return t.UTC(), nil
}

// Time is a timestamp on the wire, rendered as serde renders a chrono
// DateTime<Utc> (rustjson.TimeZ): UTC with "Z", keeping every non-zero
// sub-second digit, so get returns exactly what create did.
type Time struct{ time.Time }

// MarshalJSON renders rustjson.TimeZ as a JSON string.
func (t Time) MarshalJSON() ([]byte, error) {
	return append(rustjson.AppendTime([]byte{'"'}, t.Time, "Z"), '"'), nil
}

// UnmarshalJSON accepts any RFC 3339 string.
func (t *Time) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := ParseTime("timestamp", s)
	if err != nil {
		return err
	}
	t.Time = v
	return nil
}
