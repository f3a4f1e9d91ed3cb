package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakedaemon"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
	"github.com/animus-plugins/animus-plugins/e2e/fakeslack"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// The story's fixed names. The workflow id is the daemon's choice, the
// trigger id the operator's (SLACK_TRIGGER_ID), the rest is Slack's.
const (
	storyWorkflow = "wf-review-42"
	storyPhase    = "review"
	storyTrigger  = "slack-review"
	storyChannel  = "C0ENG"
	storyAuthor   = "U0ALICE"
	storyMention  = "<@U0BOT> please review PR #42 (it fixes the flaky login test)"
)

// StoryResult is what each step of the story produced, as the plugins
// answered it. The e2e test asserts on it; the demo prints it.
type StoryResult struct {
	Project string
	Daemon  string // the daemon line the story ran as ("0.6", "0.7")

	// 1. Slack
	EventID, TriggerID, EventKind, EventText string

	// 2. subject and queue
	SubjectID, SubjectKey, OtherKey, EntryID string
	Leased                                   []StoryLease

	// 3. durable steps, a SIGKILL, the replay
	FirstRun, Replay    []string // begin_step statuses, in step order
	ReplayOutputsMatch  bool     // prior_output == what was committed, for every step
	KilledBySignal      bool
	EffectsBefore       int // chat.postMessage calls fake Slack saw before the crash
	EffectsAfter        int // ... and after the replay
	EpochBefore, Epoch2 uint64
	CommittedSteps      []string // query_run, in commit order

	// 4. logs
	LogsStored, LogsQueried, LogsTailed []string // LogEntry ids
	LokiEntries                         int      // entries fake Loki holds

	// 2 and 5 as a 0.7 daemon: the queue's generation-fenced surface
	V2 StoryV2

	// 5. completion
	SubjectStatus    string // from the subject plugin
	Completion       string // queue/completion result (0.6) or queue/v2/completion outcome (0.7)
	PendingAfter     int    // queue/stats pending from the queue plugin
	AssignedAfter    int    // ... and assigned
	Deliveries       int    // webhook requests received
	SignatureOK      bool   // the receiver verified the Standard Webhooks signature
	WrongKeyRejected bool   // ... and the same request fails with another key
	WebhookEventType string
	WebhookWorkflow  string

	// 6. HTTP
	RESTQueueStats     map[string]int
	RESTSubjectStatus  string
	RESTWorkflowStatus string
	Emitted, SSE       []string // daemon event kinds published, and received over SSE, in order
	SSEEnd             bool     // the stream ended with event: end on shutdown
	DaemonCalls        []string // control methods the transport sent the daemon

	Rows []StoryRow
	Wire []string // every plugin process's full wire log, labelled
}

// StoryLease is one leased queue entry.
type StoryLease struct {
	EntryID    string `json:"entry_id"`
	SubjectID  string `json:"subject_id"`
	WorkflowID string `json:"workflow_id"`
}

// StoryRow is one line of the story's summary table.
type StoryRow struct{ Plugin, Kind, Result, Did string }

// storyPlugins are the seven plugins, in the order the story meets them.
var storyPlugins = []struct{ binary, kind string }{
	{"animus-trigger-slack", "trigger_backend"},
	{"animus-subject-sqlite", "subject_backend"},
	{"animus-queue-sqlite", "queue"},
	{"animus-durable-sqlite", "durable_store"},
	{"animus-logs-loki", "log_storage_backend"},
	{"animus-notifier-webhook", "notifier"},
	{"animus-transport-http", "transport_backend"},
}

// story is one run: the daemon's side of every connection, the local
// fakes, and what has happened so far.
type story struct {
	*Demo
	ctx     context.Context
	res     *StoryResult
	project string
	built   map[string]bool
	did     map[string][]string // binary → what it did
	failed  map[string]string   // binary → why it failed

	slack    *fakeslack.Server
	loki     *fakeloki.Server
	daemon   *fakedaemon.Daemon
	receiver *webhookReceiver
	queue    *queueDemo
	v2       storyTickets // the 0.7 daemon's local lease projection

	trigger, subjects, logs *fakehost.Host // long-lived processes
	transport               *fakehost.Host
	httpBase                string
	sse                     *storySSE
	mirror                  storyMirror
	logSeq                  int
	logErr                  error  // the first failed log_storage/store
	mentionTS               string // the Slack message the workflow answers in the thread of
}

// RunStory runs the end-to-end story against the binaries in binDir as
// the daemon line (fakehost.Daemon06, Daemon07) and narrates it to w: every
// plugin is initialized with that line's handshakes, and as a 0.7 daemon
// the queue steps go through queue/v2 behind the daemon's gate. It returns
// what every step produced; the error says which step failed.
func RunStory(ctx context.Context, binDir string, w io.Writer, daemon fakehost.Daemon) (*StoryResult, error) {
	schemas, err := schemacheck.Default()
	if err != nil {
		return nil, fmt.Errorf("schemas: %w", err)
	}
	n := NewNarrator(w)
	s := &story{
		Demo: &Demo{Narrator: n, BinDir: binDir, Schemas: schemas, Daemon: daemon},
		ctx:  ctx, res: &StoryResult{Daemon: daemon.String()}, built: map[string]bool{},
		did: map[string][]string{}, failed: map[string]string{},
	}
	n.Title(fmt.Sprintf("The end-to-end story as an Animus %s daemon: one Slack mention, seven plugins", daemon))
	start := time.Now()
	err = s.run()
	err = errors.Join(err, s.finish())
	s.summary(w, time.Since(start))
	return s.res, err
}

// storyStep is one numbered step; a fatal one stops the story when it
// fails, since the later steps build on it.
type storyStep struct {
	fatal bool
	run   func() error
}

func (s *story) run() error {
	if err := s.prologue(); err != nil {
		s.Bad("%v", err)
		return fmt.Errorf("setup: %w", err)
	}
	var errs []error
	for i, st := range []storyStep{
		{true, s.stepSlack},
		{true, s.stepDispatch},
		{true, s.stepDurable},
		{false, s.stepLogs},
		{true, s.stepComplete},
		{true, s.stepHTTP},
	} {
		if err := st.run(); err != nil {
			if !strings.HasPrefix(err.Error(), "expectation failed") { // Expect printed it already
				s.Bad("%v", err)
			}
			errs = append(errs, fmt.Errorf("step %d: %w", i+1, err))
			if st.fatal {
				break
			}
		}
	}
	return errors.Join(errs...)
}

// prologue sets up the project, the fakes and the daemon's long-lived
// plugins: the transport (with a dashboard on its SSE stream) and the log
// storage.
func (s *story) prologue() error {
	dir, err := os.MkdirTemp("", "animus-story-*")
	if err != nil {
		return err
	}
	if s.project, err = filepath.EvalSymlinks(dir); err != nil {
		return err
	}
	s.res.Project = s.project
	s.Step("0. The daemon starts in project %s", s.project)
	s.sayLine()
	s.Say("Discovery: each plugin binary answers `--manifest` (scrubbed environment, as the daemon probes it)")
	var plugins []fakedaemon.PluginInfo
	for _, p := range storyPlugins {
		m, err := fakehost.Probe(s.ctx, filepath.Join(s.BinDir, p.binary), fakehost.ProbeOptions{Schemas: s.Schemas})
		if err != nil {
			s.Bad("%s: %v", p.binary, err)
			s.failed[p.binary] = "NOT BUILT (run make build)"
			continue
		}
		s.built[p.binary] = true
		if m.PluginKind != p.kind {
			return fmt.Errorf("%s: plugin_kind %q, want %q", p.binary, m.PluginKind, p.kind)
		}
		s.OK("%-24s %-20s %-14s %2d capabilities, %2d env vars declared", m.Name, m.PluginKind, m.Version, len(m.Capabilities), len(m.EnvRequired))
		plugins = append(plugins, fakedaemon.PluginInfo{Name: m.Name, Version: m.Version, Kind: m.PluginKind, SignatureVerified: true, Description: m.Description})
	}
	s.slack = fakeslack.Start(fakeslack.Options{})
	if s.loki, err = fakeloki.Start(fakeloki.Options{}); err != nil {
		return err
	}
	s.receiver = newWebhookReceiver(storyRandomSecret(), 0)
	if s.daemon, err = fakedaemon.Start(fakedaemon.Options{Path: filepath.Join(s.project, ".animus", "control.sock"), ProjectRoot: s.project}); err != nil {
		return err
	}
	s.mirror.plugins = plugins
	s.sync()
	s.Say("Local stand-ins: Slack %s, Loki %s, a webhook receiver %s, the daemon's control socket .animus/control.sock",
		s.slack.APIBase(), s.loki.URL(), s.receiver.srv.URL)
	if err := s.startTransport(); err != nil {
		return fmt.Errorf("animus-transport-http: %w", s.fail("animus-transport-http", err))
	}
	if err := s.startLogs(); err != nil {
		s.Bad("animus-logs-loki: %v (step 4 will fail; the rest of the story goes on)", s.fail("animus-logs-loki", err))
	}
	return nil
}

// need checks that every binary a step uses was found by discovery.
func (s *story) need(binaries ...string) error {
	for _, b := range binaries {
		if !s.built[b] {
			return fmt.Errorf("%s is not built: run make build", b)
		}
	}
	return nil
}

// record notes what a plugin did, for the summary.
func (s *story) record(binary, format string, args ...any) {
	s.did[binary] = append(s.did[binary], fmt.Sprintf(format, args...))
}

// fail marks binary as failed and returns err.
func (s *story) fail(binary string, err error) error {
	if _, ok := s.failed[binary]; !ok && err != nil {
		s.failed[binary] = "FAILED: " + err.Error()
	}
	return err
}

// call sends a request to one of the long-lived plugins and decodes a
// successful result into out; an error response is an error.
func (s *story) call(h *fakehost.Host, method string, params, out any) (*fakehost.Response, error) {
	return s.CallInto(s.ctx, h, method, params, out)
}

// emit publishes a daemon event on the control socket's bus, as the
// daemon does for what just happened; the dashboard receives it over SSE.
func (s *story) emit(kind string, payload map[string]any) {
	b, _ := json.Marshal(payload)
	s.daemon.EmitEvent(fakedaemon.Event{Kind: kind, Payload: b})
	s.res.Emitted = append(s.res.Emitted, kind)
}

// finish stops the long-lived plugins the daemon's way, collects the
// wire logs and closes the fakes. A plugin that does not exit by itself,
// or any wire violation seen during the story, is an error.
func (s *story) finish() error {
	var errs []error
	var stopped []string
	for _, p := range []struct {
		h   *fakehost.Host
		bin string
	}{{s.trigger, "animus-trigger-slack"}, {s.subjects, "animus-subject-sqlite"}, {s.logs, "animus-logs-loki"}} {
		if p.h == nil {
			continue
		}
		rep, err := p.h.Shutdown(s.ctx, fakehost.LadderDaemon)
		if err == nil && (!rep.ExitedByItself || rep.ExitCode != 0) {
			err = fmt.Errorf("did not exit by itself after shutdown/exit (code %d)", rep.ExitCode)
		}
		if err != nil {
			s.Bad("%s: %v", p.bin, err)
			errs = append(errs, fmt.Errorf("%s: %w", p.bin, s.fail(p.bin, err)))
			continue
		}
		stopped = append(stopped, p.bin)
	}
	if len(stopped) > 0 {
		s.Step("The daemon stops its long-lived plugins (shutdown, exit)")
		s.OK("%s: each exited by itself with code 0", strings.Join(stopped, ", "))
	}
	for _, h := range s.hosts {
		s.res.Wire = append(s.res.Wire, fmt.Sprintf("── %s (pid %d)\n%s", s.names[h], h.Pid(), h.WireLog()))
	}
	if err := s.close(); err != nil {
		s.Bad("%v", err)
		errs = append(errs, err)
	}
	if s.sse != nil {
		s.sse.stop()
	}
	for _, c := range []interface{ Close() }{s.slack, s.loki} {
		if c != nil {
			c.Close()
		}
	}
	if s.daemon != nil {
		s.daemon.Close()
	}
	if s.receiver != nil {
		s.receiver.srv.Close()
	}
	if s.project != "" {
		os.RemoveAll(s.project)
	}
	return errors.Join(errs...)
}

// summary prints (and keeps) one row per plugin.
func (s *story) summary(w io.Writer, took time.Duration) {
	s.Title(fmt.Sprintf("Story summary as the %s daemon (%v)", s.Daemon, took.Round(time.Millisecond)))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PLUGIN\tKIND\tRESULT\tWHAT IT DID IN THE STORY")
	for _, p := range storyPlugins {
		result, did := "ok", strings.Join(s.did[p.binary], "; ")
		if why, bad := s.failed[p.binary]; bad {
			result = why
			if len(result) > 60 {
				result = result[:57] + "..."
			}
		} else if did == "" {
			result = "not reached"
		}
		s.res.Rows = append(s.res.Rows, StoryRow{p.binary, p.kind, result, did})
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.binary, p.kind, result, did)
	}
	tw.Flush()
}
