package wire

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// Strict decoding for the queue 0.4.0 envelopes and the execution fence
// objects, which serde declares deny_unknown_fields. encoding/json's
// DisallowUnknownFields is decoder-wide and would also refuse unknown keys
// inside the lenient subject_dispatch, so each strict object checks its own
// keys against the fields it declares, in declaration order, and words the
// refusal as serde does.

// strictObject parses raw as a JSON object whose keys must all be in
// fields (the serde declaration order, used in the message).
func strictObject(raw []byte, what string, fields ...string) (object, error) {
	o, err := parseObject(raw, "struct "+what)
	if err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(fields))
	for _, f := range fields {
		known[f] = true
	}
	var unknown []string
	for k := range o {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown) // deterministic when several are unknown
		return nil, unknownField(unknown[0], fields)
	}
	return o, nil
}

// requiredStrict is requiredParams for a strict envelope: none at all is
// pluginkit.ErrMissingParams.
func requiredStrict(raw []byte, what string, fields ...string) (object, error) {
	if len(raw) == 0 {
		return nil, pluginkit.ErrMissingParams
	}
	return strictObject(raw, what, fields...)
}

// unknownField is serde's message for a deny_unknown_fields refusal.
func unknownField(name string, fields []string) error {
	quoted := make([]string, len(fields))
	for i, f := range fields {
		quoted[i] = "`" + f + "`"
	}
	var expected string
	switch len(quoted) {
	case 0:
		expected = "there are no fields"
	case 1:
		expected = "expected " + quoted[0]
	case 2:
		expected = "expected " + quoted[0] + " or " + quoted[1]
	default:
		expected = "expected one of " + strings.Join(quoted, ", ")
	}
	return fmt.Errorf("unknown field `%s`, %s", name, expected)
}

// reqObject returns a required nested object's raw value; null is refused
// as serde refuses it for a non-Option field.
func (o object) reqObject(name, what string) (json.RawMessage, error) {
	v, ok := o[name]
	if !ok {
		return nil, missing(name)
	}
	if rustjson.IsNull(v) || kindOf(v) != "object" {
		return nil, wrongType(name, v, "struct "+what)
	}
	return v, nil
}

// reqUint32 decodes a required u32 field.
func (o object) reqUint32(name string) (uint32, error) {
	v, err := o.reqUint(name)
	if err != nil {
		return 0, err
	}
	if v > math.MaxUint32 {
		return 0, fmt.Errorf("invalid value for `%s`: integer `%d`, expected u32", name, v)
	}
	return uint32(v), nil
}

// optArray returns the elements of an optional array field.
func (o object) optArray(name, what string) ([]json.RawMessage, error) {
	v := o.get(name)
	if v == nil {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		return nil, wrongType(name, v, "a sequence of "+what)
	}
	return items, nil
}
