// Command refnotifier behaves like the reference animus-notifier-http
// v0.1.0 (notifier-webhook.md §3), in memory: it reads notification_config
// from <cwd>/.animus/pm-config.json, sends unsigned deliveries with random
// delivery ids, retries 408/425/429/5xx after base·2^(n-1) seconds with no
// jitter and no Retry-After, dead-letters other 4xx, and forgets a
// delivery once sent. The conformance tests run the notifier suites against
// it to show which scenarios a reference-like plugin passes (the kind
// suite) and which ones it fails (this repository's plugin's own). With
// REFNOTIFIER_BROKEN=1 it also retries 400s and drops the loop guard.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

type event struct {
	ID          string          `json:"id"`
	Seq         uint64          `json:"seq"`
	Timestamp   string          `json:"timestamp"`
	EventType   string          `json:"event_type"`
	ProjectRoot string          `json:"project_root"`
	Data        json.RawMessage `json:"data"`
}

type entry struct {
	key, connector, url string
	body                []byte
	attempts            int
	due                 time.Time
}

type lifecycle struct {
	EventType string         `json:"event_type"`
	Data      map[string]any `json:"data"`
}

type plugin struct {
	broken bool
	mu     sync.Mutex
	outbox []*entry
}

type config struct {
	Connectors []struct {
		ID     string `json:"id"`
		URLEnv string `json:"url_env"`
	} `json:"connectors"`
	Subscriptions []struct {
		ID          string `json:"id"`
		ConnectorID string `json:"connector_id"`
	} `json:"subscriptions"`
	RetryPolicy struct {
		BaseDelaySecs int `json:"base_delay_secs"`
	} `json:"retry_policy"`
}

func loadConfig() (*config, error) {
	raw, err := os.ReadFile(filepath.Join(".animus", "pm-config.json"))
	if err != nil {
		return nil, nil
	}
	var doc struct {
		NotificationConfig *config `json:"notification_config"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	return doc.NotificationConfig, nil
}

func (p *plugin) notify(ctx context.Context, params struct {
	Event *event `json:"event"`
}) (map[string]any, error) {
	ev := params.Event
	if ev == nil || ev.ProjectRoot == "" {
		return nil, pluginkit.InvalidParams("event.project_root is required")
	}
	cfg, err := loadConfig()
	if err != nil || cfg == nil {
		return map[string]any{"accepted": false, "delivered": 0, "lifecycle_events": []lifecycle{}}, err
	}
	var data struct {
		ConnectorID string `json:"connector_id"`
	}
	_ = json.Unmarshal(ev.Data, &data)
	evs := []lifecycle{}
	p.mu.Lock()
	for _, sub := range cfg.Subscriptions {
		if !p.broken && strings.HasPrefix(ev.EventType, "notification-delivery-") && data.ConnectorID == sub.ConnectorID {
			continue
		}
		key := ev.ID + "\x00" + sub.ConnectorID + "\x00" + sub.ID
		if p.pending(key) {
			continue
		}
		url := ""
		for _, c := range cfg.Connectors {
			if c.ID == sub.ConnectorID {
				url = os.Getenv(c.URLEnv)
			}
		}
		id := uuid4()
		body, _ := json.Marshal(map[string]any{"schema": "animus.daemon.notification-delivery.v1", "delivery_id": id,
			"connector_id": sub.ConnectorID, "subscription_id": sub.ID, "event": ev})
		p.outbox = append(p.outbox, &entry{key: key, connector: sub.ConnectorID, url: url, body: body, due: time.Now()})
		evs = append(evs, lifecycle{"notification-delivery-enqueued", map[string]any{"delivery_id": id}})
	}
	p.mu.Unlock()
	sent, more := p.flushDue(cfg)
	return map[string]any{"accepted": len(evs) > 0, "delivered": sent, "lifecycle_events": append(evs, more...)}, nil
}

func (p *plugin) pending(key string) bool {
	for _, e := range p.outbox {
		if e.key == key {
			return true
		}
	}
	return false
}

func (p *plugin) flush(ctx context.Context, _ struct{}) (map[string]any, error) {
	cfg, err := loadConfig()
	if err != nil || cfg == nil {
		return map[string]any{"lifecycle_events": []lifecycle{}}, err
	}
	_, evs := p.flushDue(cfg)
	return map[string]any{"lifecycle_events": evs}, nil
}

func (p *plugin) flushDue(cfg *config) (int, []lifecycle) {
	p.mu.Lock()
	defer p.mu.Unlock()
	base := max(cfg.RetryPolicy.BaseDelaySecs, 1)
	evs := []lifecycle{}
	sent := 0
	var keep []*entry
	for _, e := range p.outbox {
		if time.Now().Before(e.due) {
			keep = append(keep, e)
			continue
		}
		e.attempts++
		status := 0
		if resp, err := http.Post(e.url, "application/json", bytes.NewReader(e.body)); err == nil {
			status = resp.StatusCode
			resp.Body.Close()
		}
		switch {
		case status >= 200 && status < 300:
			sent++
			evs = append(evs, lifecycle{"notification-delivery-sent", map[string]any{"attempts": e.attempts}})
		case status == 0 || status == 408 || status == 425 || status == 429 || status >= 500 || p.broken:
			e.due = time.Now().Add(time.Duration(base<<(e.attempts-1)) * time.Second)
			keep = append(keep, e)
			evs = append(evs, lifecycle{"notification-delivery-failed", map[string]any{"attempts": e.attempts, "retriable": true}})
		default:
			evs = append(evs, lifecycle{"notification-delivery-dead-lettered", map[string]any{"attempts": e.attempts}})
		}
	}
	p.outbox = keep
	return sent, evs
}

func uuid4() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func main() {
	p := &plugin{broken: os.Getenv("REFNOTIFIER_BROKEN") == "1"}
	mux := pluginkit.NewMux()
	pluginkit.Handle(mux, "notifier/notify", p.notify)
	pluginkit.Handle(mux, "notifier/flush", p.flush)
	pluginkit.Handle(mux, "notifier/schema", func(context.Context, struct{}) (map[string]any, error) {
		return map[string]any{"connector_kinds": []string{"webhook"}, "supports_flush": true}, nil
	})
	os.Exit(pluginkit.Main(pluginkit.Plugin{
		Name: "refnotifier", Kind: "notifier", Description: "reference-like notifier fixture",
		Env: []pluginkit.EnvVar{{Name: "REFNOTIFIER_BROKEN", Description: "retry 400s, no loop guard"}},
		Mux: mux,
	}))
}
