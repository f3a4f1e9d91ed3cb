package cursor

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
)

// Version is the only cursor format this plugin reads.
const Version = 1

// Directions of a cursor.
const (
	Forward  = "fwd" // next page holds newer entries
	Backward = "bwd" // next page holds older entries
)

// Cursor is the decoded state.
type Cursor struct {
	V     int      `json:"v"`
	Dir   string   `json:"dir"`
	TS    int64    `json:"ts"`  // boundary timestamp, ns
	IDs   []string `json:"ids"` // ids already returned with exactly TS
	Q     string   `json:"q"`   // Hash of the normalised filter
	Start int64    `json:"s"`   // pinned window start, ns inclusive
	End   int64    `json:"e"`   // pinned window end, ns exclusive
}

// Errors of Decode.
var (
	ErrMalformed = errors.New("cursor is not one this plugin issued")
	ErrVersion   = errors.New("cursor version is not supported")
)

// Encode renders c as an opaque string.
func Encode(c Cursor) string {
	c.V = Version
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Decode parses a cursor from Encode.
func Decode(s string) (Cursor, error) {
	var c Cursor
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil || json.Unmarshal(b, &c) != nil {
		return Cursor{}, ErrMalformed
	}
	if c.V != Version {
		return Cursor{}, ErrVersion
	}
	if (c.Dir != Forward && c.Dir != Backward) || c.Q == "" || c.End <= c.Start || c.TS < c.Start || c.TS >= c.End {
		return Cursor{}, ErrMalformed
	}
	return c, nil
}

// Hash fingerprints a normalised filter: the parts, in a fixed order,
// joined unambiguously.
func Hash(parts ...string) string {
	b, _ := json.Marshal(parts)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Seen reports whether an entry (ts, id) was already returned by the page
// that issued c.
func (c Cursor) Seen(ts int64, id string) bool {
	if ts != c.TS {
		return false
	}
	for _, s := range c.IDs {
		if s == id {
			return true
		}
	}
	return false
}

// Beyond reports whether an entry at ts lies past the cursor boundary in
// the cursor's direction, i.e. belongs to a later page or to this one.
func (c Cursor) Beyond(ts int64) bool {
	if c.Dir == Forward {
		return ts >= c.TS
	}
	return ts <= c.TS
}
