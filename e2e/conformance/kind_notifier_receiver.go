package conformance

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// The notifier suite drives a plugin against webhook receivers on
// 127.0.0.1 configured through the reference's notification_config
// (notifier-webhook.md §3.1) in <project>/.animus/pm-config.json, with the
// *_env variables passed the way the daemon forwards them.
const (
	notifierURLEnv    = "NOTIFIER_CONFORMANCE_URL"
	notifierSecretEnv = "NOTIFIER_CONFORMANCE_SECRET"
	notifierSecret    = "whsec_Y29uZm9ybWFuY2Utc2lnbmluZy1rZXktMDAx"
	notifierConnector = "conformance"
	// notifierCallBudget is the daemon's timeout for notify and flush.
	notifierCallBudget = 15 * time.Second
)

// hookRequest is one request a receiver saw and the status it answered.
type hookRequest struct {
	at     time.Time
	status int
	header http.Header
	body   []byte
}

// hookReceiver answers a scripted status sequence (the last repeats).
type hookReceiver struct {
	srv        *httptest.Server
	mu         sync.Mutex
	statuses   []int
	retryAfter string
	got        []hookRequest
}

func newHookReceiver(retryAfter string, statuses ...int) *hookReceiver {
	r := &hookReceiver{statuses: statuses, retryAfter: retryAfter}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		r.mu.Lock()
		status := r.statuses[min(len(r.got), len(r.statuses)-1)]
		r.got = append(r.got, hookRequest{at: time.Now(), status: status, header: req.Header.Clone(), body: body})
		r.mu.Unlock()
		if r.retryAfter != "" && status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", r.retryAfter)
		}
		w.WriteHeader(status)
	}))
	return r
}

func (r *hookReceiver) requests() []hookRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hookRequest(nil), r.got...)
}

func (r *hookReceiver) delivered() int {
	n := 0
	for _, q := range r.requests() {
		if q.status/100 == 2 {
			n++
		}
	}
	return n
}

// notifierConfig is a signed webhook connector subscribed to every event,
// with the smallest retry delays the reference's clamps allow.
func notifierConfig() string {
	return `{"schema":"animus.daemon-notification-config.v1","version":1,
		"connectors":[{"type":"webhook","id":"` + notifierConnector + `","url_env":"` + notifierURLEnv + `",
			"signing_secret_env":"` + notifierSecretEnv + `","timeout_secs":5}],
		"subscriptions":[{"id":"everything","connector_id":"` + notifierConnector + `","event_types":["*"]}],
		"retry_policy":{"max_attempts":5,"base_delay_secs":1,"max_delay_secs":4},"max_deliveries_per_tick":16}`
}

// notifierProject is a project root holding pm-config.json, and an empty
// HOME so no scoped configuration of the operator's applies.
type notifierProject struct {
	root, home string
	recv       *hookReceiver
}

func newNotifierProject(recv *hookReceiver) (*notifierProject, error) {
	root, err := os.MkdirTemp("", "notifier-conformance-*")
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	p := &notifierProject{root: root, home: filepath.Join(root, ".home"), recv: recv}
	if err := os.MkdirAll(filepath.Join(root, ".animus"), 0o755); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(p.home, 0o755); err != nil {
		return nil, err
	}
	doc := `{"notification_config":` + notifierConfig() + `}`
	return p, os.WriteFile(filepath.Join(root, ".animus", "pm-config.json"), []byte(doc), 0o600)
}

func (p *notifierProject) close() {
	p.recv.srv.Close()
	os.RemoveAll(p.root)
}

// spawn starts the plugin as the notifier dispatcher does: cwd = project
// root, the narrow allowlist, env_required, the *_env names as extras, and
// the notifier client's handshake.
func (p *notifierProject) spawn(ctx context.Context, s *Session) (*fakehost.Host, error) {
	h, _, err := s.SpawnReady(ctx, fakehost.Handshake{Preset: fakehost.PresetNotifier}, func(c *fakehost.Config) {
		c.Dir = p.root
		c.EnvMode = fakehost.EnvDaemonNarrow
		env := map[string]string{"HOME": p.home}
		for k, v := range c.Env {
			env[k] = v
		}
		c.Env = env
		c.Extra = map[string]string{notifierURLEnv: p.recv.srv.URL + "/animus", notifierSecretEnv: notifierSecret}
	})
	return h, err
}

// withNotifier runs fn against a fresh process bound to a fresh project
// whose receiver answers statuses.
func withNotifier(ctx context.Context, s *Session, retryAfter string, statuses []int, fn func(h *fakehost.Host, p *notifierProject) Outcome) Outcome {
	p, err := newNotifierProject(newHookReceiver(retryAfter, statuses...))
	if p != nil {
		defer p.close()
	}
	if err != nil {
		return failf("project setup: %v", err)
	}
	h, err := p.spawn(ctx, s)
	if err != nil {
		return failf("%v", err)
	}
	return fn(h, p)
}

func (p *notifierProject) event(id, eventType string, data map[string]any) map[string]any {
	if data == nil {
		data = map[string]any{}
	}
	return map[string]any{"schema": "animus.daemon.event.v1", "id": id, "seq": 1,
		"timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000000+00:00"), "event_type": eventType,
		"project_root": p.root, "data": data}
}

type notifierLifecycle struct {
	EventType string         `json:"event_type"`
	Data      map[string]any `json:"data"`
}

type notifierNotifyResult struct {
	Accepted        bool                `json:"accepted"`
	Delivered       int                 `json:"delivered"`
	LifecycleEvents []notifierLifecycle `json:"lifecycle_events"`
}

func notifierNotify(ctx context.Context, h *fakehost.Host, ev map[string]any) (notifierNotifyResult, error) {
	var res notifierNotifyResult
	resp, err := call(ctx, h, notifierCallBudget, "notifier/notify", map[string]any{"event": ev})
	if err == nil {
		err = wantResult(resp, &res)
	}
	return res, err
}

// notifierTicks sends flush {} every 200 ms (the daemon's tick, sped up)
// until done or the window ends, and returns the lifecycle events seen.
func notifierTicks(ctx context.Context, h *fakehost.Host, window time.Duration, done func() bool) ([]notifierLifecycle, error) {
	var out []notifierLifecycle
	end := time.Now().Add(window)
	for !done() && time.Now().Before(end) {
		time.Sleep(200 * time.Millisecond)
		resp, err := call(ctx, h, notifierCallBudget, "notifier/flush", json.RawMessage(`{}`))
		if err != nil {
			return out, err
		}
		var res struct {
			LifecycleEvents []notifierLifecycle `json:"lifecycle_events"`
		}
		if err := wantResult(resp, &res); err != nil {
			return out, err
		}
		out = append(out, res.LifecycleEvents...)
	}
	return out, nil
}

func lifecycleTypes(evs []notifierLifecycle) string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = strings.TrimPrefix(e.EventType, "notification-delivery-")
	}
	return strings.Join(out, ",")
}
