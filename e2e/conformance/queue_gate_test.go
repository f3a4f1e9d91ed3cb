package conformance

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// TestRequireGenerationFencedQueue walks every rule of the daemon's gate
// (queue-v2.md §1.1) with one initialize result per row.
func TestRequireGenerationFencedQueue(t *testing.T) {
	all := append([]string{"queue/enqueue", "queue/list", "health/check"}, QueueV2Methods...)
	without := func(drop string) []string {
		var out []string
		for _, m := range all {
			if m != drop {
				out = append(out, m)
			}
		}
		return out
	}
	good := `{"generation_fenced_leases_v1":true,"max_lease_batch":5,"priority_weighted":false}`
	cases := []struct {
		name    string
		kinds   map[string]fakehost.KindCapability
		methods []string
		wantErr string // "" = accepted
		want    QueueCapabilities
	}{
		{name: "reference reply", kinds: queueKind("0.4.0", good), methods: all,
			want: QueueCapabilities{MaxLeaseBatch: 5, GenerationFencedLeasesV1: true}},
		{name: "unknown extra keys are fine", kinds: queueKind("0.4.0", `{"generation_fenced_leases_v1":true,"max_lease_batch":4294967295,"future":[1]}`), methods: all,
			want: QueueCapabilities{MaxLeaseBatch: 4294967295, GenerationFencedLeasesV1: true}},
		{name: "crate version is not checked", kinds: queueKind("0.3.2", good), methods: all,
			want: QueueCapabilities{MaxLeaseBatch: 5, GenerationFencedLeasesV1: true}},
		{name: "no kind_capabilities", methods: all, wantErr: `no "queue" entry`},
		{name: "other kind only", kinds: map[string]fakehost.KindCapability{"durable": {CrateVersion: "0.4.0", Extra: json.RawMessage(good)}}, methods: all, wantErr: `no "queue" entry`},
		{name: "extra absent", kinds: queueKind("0.4.0", ""), methods: all, wantErr: "expected struct QueueCapabilities"},
		{name: "extra null", kinds: queueKind("0.4.0", "null"), methods: all, wantErr: "expected struct QueueCapabilities"},
		{name: "extra array", kinds: queueKind("0.4.0", "[]"), methods: all, wantErr: "expected struct QueueCapabilities"},
		{name: "today's 0.3.2 extra", kinds: queueKind("0.3.2", `{"max_lease_batch":100,"priority_weighted":false}`), methods: all, wantErr: "generation_fenced_leases_v1 is not true"},
		{name: "flag false", kinds: queueKind("0.4.0", `{"generation_fenced_leases_v1":false,"max_lease_batch":5}`), methods: all, wantErr: "not true"},
		{name: "flag as string", kinds: queueKind("0.4.0", `{"generation_fenced_leases_v1":"true","max_lease_batch":5}`), methods: all, wantErr: "expected a boolean"},
		{name: "flag null", kinds: queueKind("0.4.0", `{"generation_fenced_leases_v1":null,"max_lease_batch":5}`), methods: all, wantErr: "expected a boolean"},
		{name: "priority_weighted null", kinds: queueKind("0.4.0", `{"generation_fenced_leases_v1":true,"max_lease_batch":5,"priority_weighted":null}`), methods: all, wantErr: "expected a boolean"},
		{name: "batch absent defaults to 0", kinds: queueKind("0.4.0", `{"generation_fenced_leases_v1":true}`), methods: all, wantErr: "max_lease_batch 0 < 5"},
		{name: "batch 4", kinds: queueKind("0.4.0", `{"generation_fenced_leases_v1":true,"max_lease_batch":4}`), methods: all, wantErr: "max_lease_batch 4 < 5"},
		{name: "batch above u32", kinds: queueKind("0.4.0", `{"generation_fenced_leases_v1":true,"max_lease_batch":4294967296}`), methods: all, wantErr: "expected u32"},
		{name: "batch negative", kinds: queueKind("0.4.0", `{"generation_fenced_leases_v1":true,"max_lease_batch":-5}`), methods: all, wantErr: "expected u32"},
		{name: "batch float", kinds: queueKind("0.4.0", `{"generation_fenced_leases_v1":true,"max_lease_batch":5.0}`), methods: all, wantErr: "expected u32"},
		{name: "batch exponent", kinds: queueKind("0.4.0", `{"generation_fenced_leases_v1":true,"max_lease_batch":5e0}`), methods: all, wantErr: "expected u32"},
		{name: "batch null", kinds: queueKind("0.4.0", `{"generation_fenced_leases_v1":true,"max_lease_batch":null}`), methods: all, wantErr: "expected u32"},
		{name: "batch string", kinds: queueKind("0.4.0", `{"generation_fenced_leases_v1":true,"max_lease_batch":"5"}`), methods: all, wantErr: "expected u32"},
		{name: "recover not listed", kinds: queueKind("0.4.0", good), methods: without("queue/v2/lease/recover"), wantErr: "lacks queue/v2/lease/recover"},
		{name: "release_pending not listed", kinds: queueKind("0.4.0", good), methods: without("queue/v2/release_pending"), wantErr: "lacks queue/v2/release_pending"},
		{name: "no methods", kinds: queueKind("0.4.0", good), wantErr: "lacks queue/v2/enqueue, queue/v2/lease"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := &fakehost.InitializeResult{KindCapabilities: c.kinds, Capabilities: fakehost.PluginCapabilities{Methods: c.methods}}
			got, err := RequireGenerationFencedQueue(res)
			if c.wantErr == "" {
				if err != nil || got != c.want {
					t.Fatalf("got %+v, %v; want %+v, accepted", got, err, c.want)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrQueueGate) || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("got %v; want a gate refusal containing %q", err, c.wantErr)
			}
		})
	}
	if _, err := RequireGenerationFencedQueue(nil); !errors.Is(err, ErrQueueGate) {
		t.Fatalf("nil result: %v", err)
	}
}

func queueKind(crate, extra string) map[string]fakehost.KindCapability {
	kc := fakehost.KindCapability{CrateVersion: crate}
	if extra != "" {
		kc.Extra = json.RawMessage(extra)
	}
	return map[string]fakehost.KindCapability{"queue": kc}
}
