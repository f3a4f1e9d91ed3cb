package wire

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// Dispatch is SubjectDispatch in canonical form. Decoding drops unknown
// fields and normalises what serde normalises (requested_at to UTC, input
// and metadata to sorted keys); Encode then reproduces the bytes a Rust
// host would produce for the same value, so a dispatch survives the queue
// unchanged in meaning and stable in form.
type Dispatch struct {
	// Subject is nil for a genuinely subjectless dispatch (0.7: optional).
	Subject *SubjectRef
	// Actor is the 0.7 transport-asserted identity, canonical; nil when
	// absent. Stored and echoed, never interpreted.
	Actor         json.RawMessage
	WorkflowRef   string
	Input         json.RawMessage // canonical; nil when absent or null
	Vars          map[string]string
	Priority      *string
	TriggerSource string
	RequestedAt   time.Time
}

// DecodeDispatch reads a SubjectDispatch. Errors name the field.
func DecodeDispatch(raw json.RawMessage) (Dispatch, error) {
	o, err := parseObject(raw, "struct SubjectDispatch")
	if err != nil {
		return Dispatch{}, err
	}
	var d Dispatch
	if subject := o.get("subject"); subject != nil {
		s, err := decodeSubject(subject)
		if err != nil {
			return Dispatch{}, fmt.Errorf("subject: %w", err)
		}
		d.Subject = &s
	}
	if d.Actor, err = decodeActor(o.get("actor")); err != nil {
		return Dispatch{}, fmt.Errorf("actor: %w", err)
	}
	if d.WorkflowRef, err = o.reqString("workflow_ref"); err != nil {
		return Dispatch{}, err
	}
	if d.Input, err = rustjson.Canonical(o.get("input")); err != nil {
		return Dispatch{}, fmt.Errorf("input: %w", err)
	}
	if d.Vars, err = decodeVars(o.get("vars")); err != nil {
		return Dispatch{}, err
	}
	if d.Priority, err = o.optString("priority"); err != nil {
		return Dispatch{}, err
	}
	if d.TriggerSource, err = o.reqString("trigger_source"); err != nil {
		return Dispatch{}, err
	}
	at, err := o.reqString("requested_at")
	if err != nil {
		return Dispatch{}, err
	}
	if d.RequestedAt, err = rustjson.ParseTime(at); err != nil {
		return Dispatch{}, fmt.Errorf("invalid value for `requested_at`: %q is %v", at, err)
	}
	return d, nil
}

// decodeVars reads the string→string map; any other value type is an error,
// as in serde (the daemon reads vars such as task_generation and branch back
// as strings).
func decodeVars(v json.RawMessage) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	o, err := parseObject(v, "a map of strings")
	if err != nil {
		return nil, fmt.Errorf("invalid type for `vars`: %s, expected a map of strings", kindOf(v))
	}
	out := make(map[string]string, len(o))
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys) // report the first bad key deterministically
	for _, k := range keys {
		var s string
		if rustjson.IsNull(o[k]) || json.Unmarshal(o[k], &s) != nil {
			return nil, wrongType("vars."+k, o[k], "a string")
		}
		out[k] = s
	}
	return out, nil
}

// dispatchOut is SubjectDispatch on output, keys in sorted order.
type dispatchOut struct {
	Actor         json.RawMessage   `json:"actor,omitempty"`
	Input         json.RawMessage   `json:"input,omitempty"`
	Priority      *string           `json:"priority,omitempty"`
	RequestedAt   string            `json:"requested_at"`
	Subject       *SubjectRef       `json:"subject,omitempty"`
	TriggerSource string            `json:"trigger_source"`
	Vars          map[string]string `json:"vars,omitempty"`
	WorkflowRef   string            `json:"workflow_ref"`
}

// Encode renders the dispatch as the references do: sorted keys, optional
// fields omitted at their defaults, requested_at with "Z".
func (d Dispatch) Encode() (json.RawMessage, error) {
	return rustjson.Marshal(dispatchOut{
		Actor:         d.Actor,
		Input:         d.Input,
		Priority:      d.Priority,
		RequestedAt:   rustjson.TimeZ(d.RequestedAt),
		Subject:       d.Subject,
		TriggerSource: d.TriggerSource,
		Vars:          d.Vars,
		WorkflowRef:   d.WorkflowRef,
	})
}

// actorOut is Actor on output: keys sorted, claims omitted when empty.
type actorOut struct {
	Claims   []string `json:"claims,omitempty"`
	TenantID *string  `json:"tenant_id,omitempty"`
	UserID   string   `json:"user_id"`
}

// decodeActor reads the 0.7 Actor leniently (unknown keys dropped) and
// returns its canonical encoding, so it survives the queue unchanged and
// hashes stably.
func decodeActor(v json.RawMessage) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	o, err := parseObject(v, "struct Actor")
	if err != nil {
		return nil, err
	}
	var a actorOut
	if a.UserID, err = o.reqString("user_id"); err != nil {
		return nil, err
	}
	if a.Claims, _, err = o.optStrings("claims"); err != nil {
		return nil, err
	}
	if a.TenantID, err = o.optString("tenant_id"); err != nil {
		return nil, err
	}
	return rustjson.Marshal(a)
}
