package queue

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/pluginkittest"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/wire"
)

// requireGenerationFencedQueue is a Go copy of the 0.7 daemon's gate
// (queue-v2.md §1.1) run on an initialize result.
func requireGenerationFencedQueue(result json.RawMessage) string {
	var init struct {
		ProtocolVersion string `json:"protocol_version"`
		Capabilities    struct {
			Methods []string `json:"methods"`
		} `json:"capabilities"`
		KindCapabilities map[string]struct {
			CrateVersion string          `json:"crate_version"`
			Extra        json.RawMessage `json:"extra"`
		} `json:"kind_capabilities"`
	}
	if err := json.Unmarshal(result, &init); err != nil {
		return err.Error()
	}
	if !strings.HasPrefix(init.ProtocolVersion, "1.") {
		return "protocol major"
	}
	q, ok := init.KindCapabilities["queue"]
	if !ok {
		return "no queue capabilities"
	}
	var extra map[string]json.RawMessage
	if err := json.Unmarshal(q.Extra, &extra); err != nil || extra == nil {
		return "extra is not an object"
	}
	var caps struct {
		Fenced   bool   `json:"generation_fenced_leases_v1"`
		MaxBatch uint64 `json:"max_lease_batch"`
		Priority bool   `json:"priority_weighted"`
	}
	if err := json.Unmarshal(q.Extra, &caps); err != nil || caps.MaxBatch > math.MaxUint32 {
		return "extra does not decode as QueueCapabilities"
	}
	if !caps.Fenced || caps.MaxBatch < 5 {
		return "not generation fenced"
	}
	for _, m := range []string{"queue/v2/enqueue", "queue/v2/lease", "queue/v2/lease/renew",
		"queue/v2/lease/recover", "queue/v2/completion", "queue/v2/release_pending"} {
		if !slices.Contains(init.Capabilities.Methods, m) {
			return "missing " + m
		}
	}
	if q.CrateVersion != wire.CrateVersion {
		return "crate_version " + q.CrateVersion
	}
	return ""
}

// §5.4 (1): the gate passes for both daemon lines' handshakes; the TTL
// variable is declared.
func TestV2Gate(t *testing.T) {
	for _, hs := range []pluginkittest.Handshake{
		{ProtocolVersion: "1.1.0", HostVersion: "0.7.0-rc.52"},
		{ProtocolVersion: "1.1.0", HostVersion: "0.6.33"},
		{ProtocolVersion: "1.2.0", HostVersion: "0.1.0"},
	} {
		f := &fixture{t: t, dir: t.TempDir(), now: t0, s: New(testConfig{}.options(t, Options{}))}
		hs.InitExtensions = json.RawMessage(`{"project_binding":` + rootBinding(f.dir) + `}`)
		if err := f.serve(hs); err != nil {
			t.Fatal(err)
		}
		if msg := requireGenerationFencedQueue(f.initResult); msg != "" {
			t.Errorf("%+v: gate refuses: %s\n%s", hs, msg, f.initResult)
		}
	}
	declared := false
	for _, e := range RulesEnv {
		declared = declared || e.Name == EnvLeaseTTLSecs && !e.Required && !e.Sensitive
	}
	if !declared {
		t.Error("ANIMUS_QUEUE_LEASE_TTL_SECS is not declared optional and non-sensitive")
	}
}

// §5.4 (2): strict envelopes and fences, lenient dispatch.
func TestV2StrictDecoding(t *testing.T) {
	f := newFixture(t, testConfig{})
	f.addTask("T-1", "")
	x := mustJSON(f.leaseOne("d"))
	withKey := func(path, key string) string { // adds "key":1 inside the object at path of the fence
		var m map[string]any
		_ = json.Unmarshal([]byte(x), &m)
		obj := m
		if path != "" {
			obj = m[path].(map[string]any)
		}
		obj[key] = 1
		return mustJSON(m)
	}
	tests := []struct{ method, params, msg string }{
		{"queue/v2/lease", `{"max":1,"owner_id":"d","workflow_ids":["a"],"surprise":1}`,
			"invalid queue/v2/lease params: unknown field `surprise`, expected one of `max`, `owner_id`, `workflow_ids`, `exclude`"},
		{"queue/v2/lease/renew", `{"execution":` + withKey("", "x") + `}`,
			"invalid queue/v2/lease/renew params: unknown field `x`, expected one of `schema`, `version`, `workflow_id`, `workflow_generation`, `subject`, `queue_lease`, `repository`"},
		{"queue/v2/lease/renew", `{"execution":` + withKey("queue_lease", "x") + `}`,
			"unknown field `x`, expected one of `entry_id`, `owner_id`, `generation`, `expires_at`"},
		{"queue/v2/lease/renew", `{"execution":` + withKey("subject", "x") + `}`,
			"unknown field `x`, expected `qualified_id` or `generation`"},
		{"queue/v2/enqueue", addParams("T-2", `,"repository":{"repository":"r","base_ref":"refs/heads/a","head_ref":"refs/heads/b","x":1}`),
			"unknown field `x`, expected one of `repository`, `base_ref`, `head_ref`"},
		{"queue/v2/completion", `{"execution":` + x + `,"status":null}`, "invalid type for `status`: null"},
		{"queue/v2/completion", `{"execution":null,"status":"completed"}`, "invalid type for `execution`: null"},
		{"queue/v2/lease", `{"max":-1,"owner_id":"d","workflow_ids":[]}`, "invalid type for `max`"},
		{"queue/v2/lease", `{"max":1.5,"owner_id":"d","workflow_ids":["a"]}`, "invalid type for `max`"},
		{"queue/v2/lease/renew", `{"execution":` + x + `,"ttl_secs":-5}`, "invalid type for `ttl_secs`"},
		{"queue/v2/lease/renew", strings.Replace(`{"execution":`+x+`}`, `"version":1`, `"version":4294967296`, 1), "expected u32"},
		{"queue/v2/lease/renew", strings.Replace(`{"execution":`+x+`}`, `"generation":1,"owner_id"`, `"generation":null,"owner_id"`, 1), "invalid type for `generation`: null"},
		{"queue/v2/lease/renew", "", "missing params for queue/v2/lease/renew"},
	}
	for _, tt := range tests {
		f.wantErr(tt.method, tt.params, -32602, tt.msg, nil)
	}
	// Unknown keys inside subject_dispatch are accepted and dropped.
	r := f.add(`{"subject_dispatch":` + v2Dispatch("T-3", `,"future":{"a":1}`) + `}`)
	if !r.Enqueued {
		t.Errorf("lenient dispatch refused: %+v", r)
	}
	var list struct{ Entries []wire.Entry }
	f.h.OK(t, "queue/list", "", &list)
	if d := string(list.Entries[1].SubjectDispatch); strings.Contains(d, "future") {
		t.Errorf("unknown dispatch key kept: %s", d)
	}
}
