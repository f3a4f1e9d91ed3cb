package wire

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// object is a JSON object decoded with exact keys. encoding/json matches
// struct fields case-insensitively, which would read {"task":{…}} as the
// legacy Task form or {"MAX":2} as max; serde matches exactly, so requests
// are taken apart by hand.
type object map[string]json.RawMessage

// parseObject decodes raw as a JSON object; what names the expected type in
// the error, as serde does ("expected struct QueueLeaseRequest").
func parseObject(raw []byte, what string) (object, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("invalid type: %s, expected %s", kindOf(raw), what)
	}
	var o object
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, fmt.Errorf("malformed %s: %v", what, err)
	}
	return o, nil
}

// get returns the value of name, or nil when it is absent or null (input
// leniency: null is the same as absent for every optional field).
func (o object) get(name string) json.RawMessage {
	v, ok := o[name]
	if !ok || rustjson.IsNull(v) {
		return nil
	}
	return v
}

func missing(name string) error { return fmt.Errorf("missing field `%s`", name) }

func wrongType(name string, v json.RawMessage, want string) error {
	return fmt.Errorf("invalid type for `%s`: %s, expected %s", name, kindOf(v), want)
}

// optString decodes an optional string field.
func (o object) optString(name string) (*string, error) {
	v := o.get(name)
	if v == nil {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, wrongType(name, v, "a string")
	}
	return &s, nil
}

// reqString decodes a required string field; null counts as a wrong type,
// as in serde.
func (o object) reqString(name string) (string, error) {
	v, ok := o[name]
	if !ok {
		return "", missing(name)
	}
	var s string
	if rustjson.IsNull(v) || json.Unmarshal(v, &s) != nil {
		return "", wrongType(name, v, "a string")
	}
	return s, nil
}

// optUint decodes an optional u64 field: a non-negative JSON integer, no
// fraction or exponent, at most 2^64-1.
func (o object) optUint(name string) (*uint64, error) {
	v := o.get(name)
	if v == nil {
		return nil, nil
	}
	var n uint64
	if err := json.Unmarshal(v, &n); err != nil {
		return nil, wrongType(name, v, "an unsigned 64-bit integer")
	}
	return &n, nil
}

// reqUint decodes a required u64 field.
func (o object) reqUint(name string) (uint64, error) {
	v, ok := o[name]
	if !ok {
		return 0, missing(name)
	}
	n, err := o.optUint(name)
	if err != nil {
		return 0, err
	}
	if n == nil {
		return 0, wrongType(name, v, "an unsigned 64-bit integer")
	}
	return *n, nil
}

// optStrings decodes an optional array of strings; a null element is an
// error (encoding/json would quietly read it as "").
func (o object) optStrings(name string) ([]string, bool, error) {
	v := o.get(name)
	if v == nil {
		return nil, false, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		return nil, false, wrongType(name, v, "an array of strings")
	}
	out := make([]string, len(items))
	for i, item := range items {
		if rustjson.IsNull(item) || json.Unmarshal(item, &out[i]) != nil {
			return nil, false, wrongType(fmt.Sprintf("%s[%d]", name, i), item, "a string")
		}
	}
	return out, true, nil
}

// reqStrings decodes a required array of strings.
func (o object) reqStrings(name string) ([]string, error) {
	v, ok := o[name]
	if !ok {
		return nil, missing(name)
	}
	out, present, err := o.optStrings(name)
	if err != nil {
		return nil, err
	}
	if !present {
		return nil, wrongType(name, v, "an array of strings")
	}
	return out, nil
}

// kindOf names a JSON value's type for error messages.
func kindOf(v []byte) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean"
	case '"':
		return "string"
	case '[':
		return "array"
	case '{':
		return "object"
	}
	return "number"
}
