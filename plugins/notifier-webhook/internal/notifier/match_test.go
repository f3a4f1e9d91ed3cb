package notifier

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/config"
)

func TestGlob(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "anything", true},
		{"*", "", true},
		{"workflow_completed", "workflow_completed", true},
		{"workflow_completed", "workflow_completed2", false},
		{"workflow_*", "workflow_failed", true},
		{"workflow_*", "task-state-change", false},
		{"*-change", "task-state-change", true},
		{"task*change", "task-state-change", true},
		{"task*state*change", "task-state-change", true},
		{"task*x*change", "task-state-change", false},
		{"a*a", "a", false},
		{"a*a", "aa", true},
		{"", "", true},
		{"", "x", false},
	}
	for _, c := range cases {
		if got := glob(c.pattern, c.s); got != c.want {
			t.Errorf("glob(%q, %q) = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
}

func TestRoutes(t *testing.T) {
	cfg, err := config.Parse([]byte(`{
		"connectors":[{"type":"webhook","id":"a"},{"type":"webhook","id":"b"},{"type":"webhook","id":"off","enabled":false}],
		"subscriptions":[
			{"id":"all-a","connector_id":"a","event_types":["*"]},
			{"id":"wf-b","connector_id":"b","event_types":["workflow_*"],"workflow_id":"wf-1"},
			{"id":"proj-b","connector_id":"b","event_types":["task-*"],"project_root":"/p","task_id":"T-1"},
			{"id":"off-sub","connector_id":"a","event_types":["*"],"enabled":false},
			{"id":"to-off","connector_id":"off","event_types":["*"]},
			{"id":"lifecycle-b","connector_id":"b","event_types":["notification-delivery-*"]}
		]}`), "test")
	if err != nil {
		t.Fatal(err)
	}
	p, q := "/p", "/q"
	cases := []struct {
		name string
		typ  string
		root *string
		data string
		want string
	}{
		{"wildcard only", "agent_started", &p, `{}`, "[all-a]"},
		{"workflow filter matches", "workflow_completed", &p, `{"workflow_id":"wf-1"}`, "[all-a wf-b]"},
		{"workflow filter differs", "workflow_completed", &p, `{"workflow_id":"wf-2"}`, "[all-a]"},
		{"workflow filter needs the key", "workflow_completed", &p, `{}`, "[all-a]"},
		{"project and task", "task-state-change", &p, `{"task_id":"T-1"}`, "[all-a proj-b]"},
		{"other project", "task-state-change", &q, `{"task_id":"T-1"}`, "[all-a]"},
		{"data not an object", "task-state-change", &p, `[1,2]`, "[all-a]"},
		// The plugin's own lifecycle events: "*" does not forward them, an
		// explicit pattern does, and never to the connector they are about.
		{"lifecycle about a", "notification-delivery-sent", &p, `{"connector_id":"a"}`, "[lifecycle-b]"},
		{"lifecycle about b", "notification-delivery-sent", &p, `{"connector_id":"b"}`, "[]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev := &Event{ID: "e", EventType: c.typ, ProjectRoot: c.root, Data: json.RawMessage(c.data)}
			var got []string
			for _, r := range routes(cfg, ev) {
				got = append(got, r.sub.ID)
			}
			if s := fmt.Sprint(got); s != c.want && !(c.want == "[]" && len(got) == 0) {
				t.Fatalf("routes = %s, want %s", s, c.want)
			}
		})
	}
}

func TestDeliveryIDIsStableUUIDv5(t *testing.T) {
	a := DeliveryID(DeliveryKey("evt", "c", "s"))
	if a != DeliveryID(DeliveryKey("evt", "c", "s")) {
		t.Fatal("not deterministic")
	}
	if a == DeliveryID(DeliveryKey("evt", "c", "s2")) || a == DeliveryID(DeliveryKey("evt2", "c", "s")) {
		t.Fatal("different keys share an id")
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(a) {
		t.Fatalf("%s is not a UUIDv5", a)
	}
	// The key is the reference's: sha256 of the NUL-joined ids.
	sum := sha256.Sum256([]byte("e\x00c\x00s"))
	if k := DeliveryKey("e", "c", "s"); k != hex.EncodeToString(sum[:]) {
		t.Fatalf("key %s", k)
	}
}

// TestLifecycleDeliveriesAreQuiet: forwarding a lifecycle event produces no
// lifecycle events of its own, so two connectors cannot ping-pong.
func TestLifecycleDeliveriesAreQuiet(t *testing.T) {
	rc := newScripted(t, 200)
	h := newHarness(t, harnessOpts{config: `{"connectors":[{"type":"webhook","id":"audit","url_env":"U"}],
		"subscriptions":[{"id":"s","connector_id":"audit","event_types":["notification-*"]}]}`, env: map[string]string{"U": rc.URL}})
	res := h.notify(h.event("lc-1", "notification-delivery-sent", `{"connector_id":"ops","delivery_id":"x"}`))
	if !res.Accepted || res.Delivered != 1 || len(res.LifecycleEvents) != 0 {
		t.Fatalf("%+v", res)
	}
	// The guard: the same event about the audit connector goes nowhere.
	res = h.notify(h.event("lc-2", "notification-delivery-sent", `{"connector_id":"audit"}`))
	if res.Accepted || len(rc.requests()) != 1 {
		t.Fatalf("loop guard: %+v, %d requests", res, len(rc.requests()))
	}
}

// TestBodyBytes: the bodies are serde_json's bytes, compact and with "<",
// ">" and "&" as sent (Go's default would write \u003c), so they match the
// reference plugin's and what receivers verify signatures over.
func TestBodyBytes(t *testing.T) {
	root := "/srv/a&b"
	ev := &Event{ID: "e<1>", Seq: 2, Timestamp: "2026-05-31T00:00:00+00:00", EventType: "task<done>", ProjectRoot: &root,
		Data: json.RawMessage(`{ "html" : "<b>&amp;</b>" }`)}
	sub := &config.Subscription{ID: "s&1"}
	cases := []struct {
		name string
		conn config.Connector
		want string
	}{
		{"webhook", config.Connector{ID: "c>1", Type: config.TypeWebhook},
			`{"schema":"animus.daemon.notification-delivery.v1","delivery_id":"d","connector_id":"c>1","subscription_id":"s&1",` +
				`"event":{"id":"e<1>","seq":2,"timestamp":"2026-05-31T00:00:00+00:00","event_type":"task<done>","project_root":"/srv/a&b","data":{"html":"<b>&amp;</b>"}}}`},
		{"slack", config.Connector{ID: "c", Type: config.TypeSlack, Channel: "#a&b"},
			`{"text":"Animus daemon event 'task<done>' (delivery: d, event: e<1>)","channel":"#a&b"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := body(&c.conn, sub, ev, "d")
			if err != nil || string(got) != c.want {
				t.Fatalf("body\n got %s %v\nwant %s", got, err, c.want)
			}
		})
	}
}
