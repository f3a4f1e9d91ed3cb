package demo

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakedaemon"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// storyMirror is the daemon state the story has seen the plugins produce;
// sync hands it to the fake control socket, so the transport serves what
// actually happened rather than fixtures.
type storyMirror struct {
	plugins   []fakedaemon.PluginInfo
	workflows []fakedaemon.WorkflowRun
	queue     []fakedaemon.QueueEntry
	subjects  []fakedaemon.Subject
}

func (s *story) sync() {
	s.daemon.Seed(fakedaemon.Snapshot{Workflows: s.mirror.workflows, Queue: s.mirror.queue, Subjects: s.mirror.subjects, Plugins: s.mirror.plugins})
}

// putSubject mirrors a Subject as the subject plugin returned it.
func (m *storyMirror) putSubject(raw json.RawMessage) error {
	var sub fakedaemon.Subject
	if err := json.Unmarshal(raw, &sub); err != nil {
		return fmt.Errorf("subject %s: %w", shortJSON(raw, 120), err)
	}
	m.subjects = slices.DeleteFunc(m.subjects, func(x fakedaemon.Subject) bool { return x.ID == sub.ID })
	m.subjects = append(m.subjects, sub)
	return nil
}

// putEntry mirrors a queue entry; the queue plugin's statuses become the
// control protocol's (pending → ready, assigned → in-flight).
func (m *storyMirror) putEntry(e fakedaemon.QueueEntry) {
	for i := range m.queue {
		if m.queue[i].ID == e.ID {
			m.queue[i] = e
			return
		}
	}
	m.queue = append(m.queue, e)
}

func (m *storyMirror) entryStatus(id, status string) {
	for i := range m.queue {
		if m.queue[i].ID == id {
			m.queue[i].Status = status
		}
	}
}

func (m *storyMirror) putWorkflow(w fakedaemon.WorkflowRun) {
	m.workflows = slices.DeleteFunc(m.workflows, func(x fakedaemon.WorkflowRun) bool { return x.ID == w.ID })
	m.workflows = append(m.workflows, w)
}

// startTransport runs `animus web serve`'s part: spawn the transport,
// hand it the control socket, and open a dashboard on the event stream.
func (s *story) startTransport() error {
	const bin = "animus-transport-http"
	if err := s.need(bin); err != nil {
		return err
	}
	h, err := s.Spawn(s.ctx, bin)
	if err != nil {
		return err
	}
	s.transport = h
	if _, err := h.Initialize(s.ctx, fakehost.Handshake{Preset: fakehost.PresetDaemon}); err != nil {
		return err
	}
	var info struct {
		BoundAddr string `json:"bound_addr"`
	}
	if _, err := s.call(h, "transport/start", map[string]string{"control_socket_path": s.daemon.Path(), "project_root": s.project, "bind_addr": "127.0.0.1:0"}, &info); err != nil {
		return err
	}
	s.httpBase = "http://" + info.BoundAddr
	if s.sse, err = openSSE(s.ctx, s.httpBase+"/api/v1/daemon/events"); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
	defer cancel()
	if err := s.daemon.WaitStreams(wctx, 1); err != nil {
		return err
	}
	s.OK("animus-transport-http serves %s; a dashboard holds GET /api/v1/daemon/events open (SSE)", s.httpBase)
	return nil
}

// stepHTTP reads the story back as an HTTP client would.
func (s *story) stepHTTP() error {
	const bin = "animus-transport-http"
	s.Step("6. A dashboard reads it all over HTTP: REST from animus-transport-http, and the SSE stream it held open since step 0")
	if s.transport == nil {
		return s.fail(bin, fmt.Errorf("the transport did not start"))
	}
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()

	var stats map[string]int
	if err := s.get(client, "/api/v1/queue/stats", &stats); err != nil {
		return s.fail(bin, err)
	}
	s.res.RESTQueueStats = stats
	var sub struct{ Status, Title string }
	if err := s.get(client, "/api/v1/subjects/"+url.PathEscape(s.res.SubjectID), &sub); err != nil {
		return s.fail(bin, err)
	}
	s.res.RESTSubjectStatus = sub.Status
	var wf struct{ Status, SubjectID string }
	if err := s.get(client, "/api/v1/workflows/"+storyWorkflow, &wf); err != nil {
		return s.fail(bin, err)
	}
	s.res.RESTWorkflowStatus = wf.Status
	if err := s.Expect(stats["ready"] == s.res.PendingAfter && stats["done_recent"] == 1 && stats["in_flight"] == s.res.AssignedAfter && sub.Status == s.res.SubjectStatus && wf.Status == "completed",
		"REST agrees with the plugins: %d ready, %d in flight (the nightly subject's), 1 done, subject %s, workflow %s", stats["ready"], stats["in_flight"], sub.Status, wf.Status); err != nil {
		return s.fail(bin, err)
	}

	s.Say("The dashboard's SSE stream, as received:")
	wctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
	got, err := s.sse.wait(wctx, len(s.res.Emitted))
	cancel()
	for _, ev := range got {
		var d struct {
			Kind    string          `json:"kind"`
			Payload json.RawMessage `json:"payload"`
		}
		_ = json.Unmarshal([]byte(ev.data), &d)
		fmt.Fprintf(s.w, "    %s %-24s %s\n", s.paint(dim, fmt.Sprintf("id: %-42s event: %s", ev.id, ev.event)), d.Kind, shortJSON(d.Payload, 70))
		s.res.SSE = append(s.res.SSE, ev.kind())
	}
	if err != nil {
		return s.fail(bin, fmt.Errorf("SSE: %d of %d events: %w", len(got), len(s.res.Emitted), err))
	}
	if err := s.Expect(slices.Equal(s.res.SSE, s.res.Emitted), "%d daemon events, in the order the daemon published them", len(got)); err != nil {
		return s.fail(bin, err)
	}

	s.Say("`animus web serve` stops: the transport ladder (transport/shutdown, shutdown, exit) with the stream still open")
	rep, err := s.transport.Shutdown(s.ctx, fakehost.LadderTransport)
	s.Frames(s.transport)
	if err != nil {
		return s.fail(bin, err)
	}
	wctx, cancel = context.WithTimeout(s.ctx, 5*time.Second)
	s.res.SSEEnd = s.sse.waitEnd(wctx) == nil
	cancel()
	if err := s.Expect(s.res.SSEEnd && rep.ExitedByItself && rep.ExitCode == 0, "the dashboard got event: end; the transport exited by itself with code %d", rep.ExitCode); err != nil {
		return s.fail(bin, err)
	}
	s.res.DaemonCalls = s.daemon.Calls()
	s.Say("Behind it, the control socket received: %s", strings.Join(s.res.DaemonCalls, ", "))
	s.record(bin, "REST queue stats + subject + workflow, %d SSE events live, end on shutdown", len(got))
	return nil
}

// get fetches a /api/v1 route, prints the exchange and decodes the
// envelope's data into out.
func (s *story) get(c *http.Client, path string, out any) error {
	status, body, err := demoHTTP(s.ctx, c, "GET", s.httpBase+path, "", nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.w, "    %s %s\n", s.paint(dim, "GET "+path+" →"), s.shorten(fmt.Sprintf("%d %s", status, strings.TrimSpace(string(body)))))
	var env struct {
		OK   bool            `json:"ok"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil || status != 200 || !env.OK {
		return fmt.Errorf("GET %s: %d %s", path, status, shortJSON(body, 200))
	}
	return json.Unmarshal(env.Data, out)
}

// storySSE is an HTTP client holding one SSE stream open and keeping
// every event it receives.
type storySSE struct {
	cancel context.CancelFunc
	mu     sync.Mutex
	events []sseEvent
	done   chan struct{}
}

type sseEvent struct{ id, event, data string }

// kind is a daemon-event's DaemonRunEvent.kind, or the SSE event name.
func (e sseEvent) kind() string {
	var ev struct{ Kind string }
	if e.event == "daemon-event" && json.Unmarshal([]byte(e.data), &ev) == nil {
		return ev.Kind
	}
	return e.event
}

func openSSE(ctx context.Context, u string) (*storySSE, error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("GET %s: %s, Content-Type %q", u, resp.Status, resp.Header.Get("Content-Type"))
	}
	c := &storySSE{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		defer resp.Body.Close()
		r := bufio.NewReader(resp.Body)
		for {
			block, err := readEvent(r)
			if block != "" {
				var ev sseEvent
				for _, line := range strings.Split(block, "\n") {
					k, v, _ := strings.Cut(line, ":")
					v = strings.TrimPrefix(v, " ")
					switch k {
					case "id":
						ev.id = v
					case "event":
						ev.event = v
					case "data":
						ev.data = v
					}
				}
				c.mu.Lock()
				c.events = append(c.events, ev)
				c.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	return c, nil
}

// wait returns the daemon events once n have arrived (or what arrived by
// the deadline, with an error).
func (c *storySSE) wait(ctx context.Context, n int) ([]sseEvent, error) {
	get := func() []sseEvent {
		c.mu.Lock()
		defer c.mu.Unlock()
		var out []sseEvent
		for _, e := range c.events {
			if e.event == "daemon-event" {
				out = append(out, e)
			}
		}
		return out
	}
	err := waitDemo(ctx, func() bool { return len(get()) >= n })
	return get(), err
}

// waitEnd waits for the event: end the transport sends when it shuts down.
func (c *storySSE) waitEnd(ctx context.Context) error {
	return waitDemo(ctx, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.events) > 0 && c.events[len(c.events)-1].event == "end"
	})
}

func (c *storySSE) stop() {
	c.cancel()
	<-c.done
}
