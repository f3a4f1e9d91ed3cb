package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// The Animus 0.7 daemon's queue gate, copied from require_generation_fenced_queue
// in animus-cli's plugin_clients.rs (queue-v2.md §1.1). The daemon runs it at
// start and again on the initialize result of every ticketed call, so a
// queue that fails it cannot serve a 0.7 daemon at all: the runner uses the
// same function to decide whether the queue-v2 suite applies.

// QueueV2Methods are the six methods the gate requires in capabilities.methods.
var QueueV2Methods = []string{
	"queue/v2/enqueue",
	"queue/v2/lease",
	"queue/v2/lease/renew",
	"queue/v2/lease/recover",
	"queue/v2/completion",
	"queue/v2/release_pending",
}

// MinLeaseBatch is the smallest max_lease_batch the daemon accepts: its
// coding scheduler leases up to five entries per tick.
const MinLeaseBatch = 5

// QueueCapabilities is kind_capabilities.queue.extra as the daemon decodes
// it (queue-v2.md §2.11): lenient (unknown keys ignored), every field
// defaulted when absent.
type QueueCapabilities struct {
	PriorityWeighted         bool   `json:"priority_weighted"`
	MaxLeaseBatch            uint32 `json:"max_lease_batch"`
	GenerationFencedLeasesV1 bool   `json:"generation_fenced_leases_v1"`
}

// ErrQueueGate wraps every refusal of RequireGenerationFencedQueue.
var ErrQueueGate = errors.New("queue refused by the Animus 0.7 gate (require_generation_fenced_queue)")

// RequireGenerationFencedQueue applies the 0.7 daemon's gate to an
// initialize result and returns the decoded capabilities, or an error
// wrapping ErrQueueGate that says which rule failed.
func RequireGenerationFencedQueue(res *fakehost.InitializeResult) (QueueCapabilities, error) {
	var caps QueueCapabilities
	if res == nil {
		return caps, fmt.Errorf("%w: no initialize result", ErrQueueGate)
	}
	kc, ok := res.KindCapabilities["queue"]
	if !ok {
		return caps, fmt.Errorf("%w: kind_capabilities has no \"queue\" entry", ErrQueueGate)
	}
	caps, err := DecodeQueueCapabilities(kc.Extra)
	if err != nil {
		return caps, fmt.Errorf("%w: kind_capabilities.queue.extra (crate_version %q): %v", ErrQueueGate, kc.CrateVersion, err)
	}
	if !caps.GenerationFencedLeasesV1 {
		return caps, fmt.Errorf("%w: kind_capabilities.queue.extra.generation_fenced_leases_v1 is not true (crate_version %q)", ErrQueueGate, kc.CrateVersion)
	}
	if caps.MaxLeaseBatch < MinLeaseBatch {
		return caps, fmt.Errorf("%w: kind_capabilities.queue.extra.max_lease_batch %d < %d", ErrQueueGate, caps.MaxLeaseBatch, MinLeaseBatch)
	}
	var missing []string
	for _, m := range QueueV2Methods {
		if !contains(res.Capabilities.Methods, m) {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		return caps, fmt.Errorf("%w: capabilities.methods lacks %s", ErrQueueGate, strings.Join(missing, ", "))
	}
	return caps, nil
}

// DecodeQueueCapabilities decodes extra the way serde decodes
// QueueCapabilities from a serde_json::Value: it must be an object (absent
// or null fails); unknown keys are ignored; a present known key must have
// its exact type (null is not a bool, 5.0 and -1 are not a u32, nor is
// anything above 2^32-1). encoding/json alone would accept null and leave
// the default, so the known keys are checked one by one.
func DecodeQueueCapabilities(extra json.RawMessage) (QueueCapabilities, error) {
	var caps QueueCapabilities
	trimmed := bytes.TrimSpace(extra)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		shown := string(trimmed)
		if shown == "" {
			shown = "absent"
		}
		return caps, fmt.Errorf("invalid type: %s, expected struct QueueCapabilities", shown)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &fields); err != nil {
		return caps, err
	}
	for key, dst := range map[string]*bool{
		"priority_weighted":           &caps.PriorityWeighted,
		"generation_fenced_leases_v1": &caps.GenerationFencedLeasesV1,
	} {
		raw, ok := fields[key]
		if !ok {
			continue
		}
		if err := json.Unmarshal(raw, new(any)); err != nil || (string(raw) != "true" && string(raw) != "false") {
			return caps, fmt.Errorf("%s: invalid type: %s, expected a boolean", key, raw)
		}
		*dst = string(raw) == "true"
	}
	if raw, ok := fields["max_lease_batch"]; ok {
		n, err := decodeU32(raw)
		if err != nil {
			return caps, fmt.Errorf("max_lease_batch: %v", err)
		}
		caps.MaxLeaseBatch = n
	}
	return caps, nil
}

// decodeU32 accepts exactly what serde_json accepts for a u32: a JSON
// integer (no fraction, no exponent) in 0..=u32::MAX.
func decodeU32(raw json.RawMessage) (uint32, error) {
	s := string(bytes.TrimSpace(raw))
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("invalid type: %s, expected u32", s)
	}
	var n uint64
	if err := json.Unmarshal([]byte(s), &n); err != nil || n > math.MaxUint32 {
		return 0, fmt.Errorf("invalid value: integer `%s`, expected u32", s)
	}
	return uint32(n), nil
}
