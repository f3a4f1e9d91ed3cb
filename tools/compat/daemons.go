package compat

import (
	"strings"

	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// DaemonLine is what a plugin was written against on one Animus daemon
// line, with the note that says so.
type DaemonLine struct {
	Line   string // "0.5.x – 0.6.x", "0.7"
	Status string // "written against", "no change required"
	Detail string
	Source string
}

// DaemonLines returns the daemon lines of a plugin (by directory). The
// entries record which caller's frames and quirks the plugin was written
// against (the fake host reproduces both lines, fakehost.Daemon06 and
// Daemon07); what the binary does under each line is measured, not
// stated here (LineRun).
func DaemonLines(dir string) []DaemonLine {
	const unchanged = "no new method, capability or gate for this kind in 0.7; only the announced handshake changes: "
	const generic = unchanged + "the generic host sends protocol `1.2.0`, host `0.1.0`, no `init_extensions`"
	const perKind = unchanged + "the per-kind client still sends `1.1.0` with `project_binding`, host `0.7.0-rc.52`"
	switch dir {
	case "subject-sqlite":
		return []DaemonLine{
			{line06, "written against", "the subject router (kinds from --manifest `subject_kind:` entries), control-surface `{filter}` list params, bare Subject results, runner fallbacks", "subject.md §3"},
			{line07, "no change required", generic + "; the actor-scoped `<kind>/v2/<verb>` surface is optional (`-32601` is fine)", "animus-0.7.md §3"},
		}
	case "subject-postgres":
		// The same wire surface as subject-sqlite (both serve
		// pkg/subjectkit), so the same callers on each line.
		return []DaemonLine{
			{line06, "written against", "the subject router exactly as animus-subject-sqlite serves it (pkg/subjectkit): kinds from --manifest `subject_kind:` entries, control-surface `{filter}` list params, bare Subject results, runner fallbacks; the subjects are the namespace `ANIMUS_SUBJECT_PG_SCHEMA`, shared by daemons on several machines, and a watch sees every host's changes (LISTEN/NOTIFY over the change log)", "subject.md §3; e2e/subjectpostgres"},
			{line07, "no change required", generic + "; the actor-scoped `<kind>/v2/<verb>` surface is optional (`-32601` is fine)", "animus-0.7.md §3; e2e/subjectpostgres"},
		}
	case "queue-sqlite":
		return []DaemonLine{
			{line06, "written against", "queue protocol 0.3.2: one process per call, the dispatch tick with workflow_ids and exclude_subjects, the completion reconcilers, v0.5.0's `repo_scope: \"\"` handshake", "queue.md §§1–6; plugins/queue-sqlite/README.md"},
			{line07, "written against", "queue protocol 0.4.0: from 0.7.0-rc.34 the daemon refuses a queue that fails its gate; the six `queue/v2/*` methods beside the old-style ones the 0.7 daemon and CLI still call, one process per call", "queue-v2.md §§1, 4; plugins/queue-sqlite/README.md"},
		}
	case "queue-postgres":
		// The same wire surface as queue-sqlite (both serve
		// pkg/queuekit/queue), so the same callers on each line.
		return []DaemonLine{
			{line06, "written against", "queue protocol 0.3.2 exactly as animus-queue-sqlite serves it (pkg/queuekit/queue): one process per call, the dispatch tick with workflow_ids and exclude_subjects, the completion reconcilers; the queue is the namespace `ANIMUS_QUEUE_PG_SCHEMA`, shared by daemons on several machines", "queue.md §§1–6; e2e/queuepostgres"},
			{line07, "written against", "queue protocol 0.4.0 exactly as animus-queue-sqlite serves it: the gate from 0.7.0-rc.34, the six `queue/v2/*` methods beside the old-style ones, one process per call, leases handed out with SKIP LOCKED", "queue-v2.md §§1, 4; e2e/queuepostgres"},
		}
	case "durable-sqlite":
		return []DaemonLine{
			{line06, "written against", "durable protocol 0.1.0 (animus-protocol v0.5.10) and its one real caller, the agent runner's recording fence", "durable.md §5"},
			{line07, "no change required", perKind + "; the durable store carries no execution fence", "animus-0.7.md §4"},
		}
	case "durable-postgres":
		// The same wire surface as durable-sqlite (both serve
		// pkg/durablekit), so the same callers on each line.
		return []DaemonLine{
			{line06, "written against", "durable protocol 0.1.0 exactly as animus-durable-sqlite serves it (pkg/durablekit) and its one real caller, the agent runner's recording fence; the step log is the namespace `ANIMUS_DURABLE_PG_SCHEMA`, shared by daemons on several machines", "durable.md §5; e2e/durablepostgres"},
			{line07, "no change required", perKind + "; the durable store carries no execution fence", "animus-0.7.md §4; e2e/durablepostgres"},
		}
	case "notifier-webhook":
		return []DaemonLine{
			{line06, "written against", "the daemon's NotifierPluginDispatcher: one notify per event, flush on its tick, `*_env` secrets forwarded", "notifier-webhook.md §2"},
			{line07, "no change required", perKind + " and `memory_mcp_stdio_command`", "animus-0.7.md §5"},
		}
	case "trigger-slack":
		return []DaemonLine{
			{line06, "written against", "the trigger supervisor: flat `trigger/event`, routing by `trigger_id`, `trigger/ack` as a notification", "trigger-slack.md §2"},
			{line07, "no change required", generic, "animus-0.7.md §6"},
		}
	case "logs-loki":
		return []DaemonLine{
			{line06, "written against", "the daemon's log writer (one entry per `log_storage/store`, 5 s) and `daemon/logs` reading through `log_storage/query`", "logs-loki.md §3"},
			{line07, "no change required", generic + "; `animus output` also reads run transcripts back through `log_storage/query`", "animus-0.7.md §7"},
		}
	case "transport-http":
		return []DaemonLine{
			{line06, "written against", "the daemon's transport hosting (transport/start with the control socket, transport/shutdown ladder) and its control protocol", "transport-http.md §§1–2"},
			{line07, "no change required", generic, "animus-0.7.md §8"},
		}
	}
	return nil
}

// The daemon line names of the tables; measuredLines maps them to the
// fake host's lines.
const (
	line06 = "0.5.x – 0.6.x"
	line07 = "0.7"
)

// Gate is a check a daemon line applies to a plugin's initialize reply
// before it will use it.
type Gate struct {
	Line   string // the DaemonLine.Line that applies it
	Since  string // the first build that does
	Source string
	// Check returns why the daemon refuses the reply; nil means it passes.
	Check func(*fakehost.InitializeResult) error
}

// Gates returns the gates a daemon line applies to a plugin_kind. Only
// the queue has one: Animus 0.7.0-rc.34+ runs require_generation_fenced_queue
// at startup and before every ticketed call (queue-v2.md §1.1). The check
// is the e2e suite's Go copy of it, so the matrix and the conformance
// runner cannot disagree on what the daemon accepts.
func Gates(line, kind string) []Gate {
	if line != line07 || kind != "queue" {
		return nil
	}
	return []Gate{{Line: line07, Since: "0.7.0-rc.34", Source: "queue-v2.md §1.1", Check: func(res *fakehost.InitializeResult) error {
		_, err := conformance.RequireGenerationFencedQueue(res)
		return err
	}}}
}

// GateResult is a gate evaluated on a real initialize reply.
type GateResult struct {
	Gate
	// Refusal is why the daemon would refuse the plugin; empty means the
	// gate passes.
	Refusal string
}

func evaluate(g Gate, res *fakehost.InitializeResult) GateResult {
	r := GateResult{Gate: g}
	if err := g.Check(res); err != nil {
		r.Refusal = strings.TrimPrefix(err.Error(), conformance.ErrQueueGate.Error()+": ")
	}
	return r
}
