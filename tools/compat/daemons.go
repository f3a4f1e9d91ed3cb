package compat

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// DaemonLine is what a plugin was written against on one Animus daemon
// line, with the note that says so.
type DaemonLine struct {
	Line   string // "0.5.x – 0.6.x", "0.7"
	Status string // "written against", "not supported", "not targeted"
	Detail string
	Source string
}

// DaemonLines returns the daemon lines of a plugin (by directory). The
// 0.5/0.6 entries record which caller's frames and quirks the plugin was
// built and tested against (the fake host reproduces them); the 0.7
// entries say what is known of that line. What the binaries do with a
// 0.7 host is measured, not stated here (Gate and the 1.2.0 handshake).
func DaemonLines(dir string) []DaemonLine {
	const notTargeted = "no 0.7 behaviour of this kind is documented in the reference notes; the 0.7 generic handshake (protocol 1.2.0) is measured below"
	switch dir {
	case "subject-sqlite":
		return []DaemonLine{
			{"0.5.x – 0.6.x", "written against", "the subject router (kinds from --manifest `subject_kind:` entries), control-surface `{filter}` list params, bare Subject results, runner fallbacks", "subject.md §3"},
			{"0.7", "not targeted", "the newest router's `<kind>/v2/<verb>` actor surface is optional (`-32601` is fine); " + notTargeted, "subject.md §3.2"},
		}
	case "queue-sqlite":
		return []DaemonLine{
			{"0.5.x – 0.6.x", "written against", "queue protocol 0.3.2: one process per call, the dispatch tick with workflow_ids and exclude_subjects, the completion reconcilers, v0.5.0's `repo_scope: \"\"` handshake", "queue.md §§1–6; plugins/queue-sqlite/README.md"},
			{"0.7", "not supported", "from 0.7.0-rc.34 the daemon refuses a queue without generation-fenced leases (queue protocol 0.4.0, six `queue/v2/*` methods); not implemented", "queue.md §8; NOTES.md"},
		}
	case "durable-sqlite":
		return []DaemonLine{
			{"0.5.x – 0.6.x", "written against", "durable protocol 0.1.0 (animus-protocol v0.5.10) and its one real caller, the agent runner's recording fence", "durable.md §5"},
			{"0.7", "not targeted", notTargeted, "durable.md"},
		}
	case "notifier-webhook":
		return []DaemonLine{
			{"0.5.x – 0.6.x", "written against", "the daemon's NotifierPluginDispatcher: one notify per event, flush on its tick, `*_env` secrets forwarded", "notifier-webhook.md §2"},
			{"0.7", "not targeted", notTargeted, "notifier-webhook.md"},
		}
	case "trigger-slack":
		return []DaemonLine{
			{"0.5.x – 0.6.x", "written against", "the trigger supervisor: flat `trigger/event`, routing by `trigger_id`, `trigger/ack` as a notification", "trigger-slack.md §2"},
			{"0.7", "not targeted", notTargeted, "trigger-slack.md"},
		}
	case "logs-loki":
		return []DaemonLine{
			{"0.5.x – 0.6.x", "written against", "the daemon's log writer (one entry per `log_storage/store`, 5 s) and `daemon/logs` reading through `log_storage/query`", "logs-loki.md §3"},
			{"0.7", "not targeted", notTargeted, "logs-loki.md"},
		}
	case "transport-http":
		return []DaemonLine{
			{"0.5.x – 0.6.x", "written against", "the daemon's transport hosting (transport/start with the control socket, transport/shutdown ladder) and its control protocol", "transport-http.md §§1–2"},
			{"0.7", "not targeted", notTargeted, "transport-http.md"},
		}
	}
	return nil
}

// Gate is a check a daemon line applies to a plugin's initialize reply
// before it will use it.
type Gate struct {
	Line   string
	Source string
	// Unmet lists what the reply lacks; empty means the gate passes.
	Unmet func(*fakehost.InitializeResult) []string
}

// Gates returns the gates known for a plugin_kind. Only the queue has one:
// Animus 0.7.0-rc.34+ checks, at startup and on every ticketed call,
// generation_fenced_leases_v1, max_lease_batch >= 5 and six queue/v2
// methods (queue.md §8).
func Gates(kind string) []Gate {
	if kind != "queue" {
		return nil
	}
	return []Gate{{Line: "0.7.0-rc.34+", Source: "queue.md §8", Unmet: queueV2Unmet}}
}

func queueV2Unmet(res *fakehost.InitializeResult) []string {
	var extra struct {
		Fenced   *bool   `json:"generation_fenced_leases_v1"`
		MaxBatch *uint64 `json:"max_lease_batch"`
	}
	if kc, ok := res.KindCapabilities["queue"]; ok && len(kc.Extra) > 0 {
		// An undecodable extra reads as absent flags, which the daemon
		// would refuse as well.
		_ = json.Unmarshal(kc.Extra, &extra)
	}
	var unmet []string
	if extra.Fenced == nil || !*extra.Fenced {
		unmet = append(unmet, "`generation_fenced_leases_v1` is not true")
	}
	if extra.MaxBatch == nil || *extra.MaxBatch < 5 {
		unmet = append(unmet, "`max_lease_batch` is below 5")
	}
	var missing int
	for _, m := range []string{"queue/v2/enqueue", "queue/v2/lease", "queue/v2/lease/renew", "queue/v2/lease/recover", "queue/v2/completion", "queue/v2/release_pending"} {
		if !slices.Contains(res.Capabilities.Methods, m) {
			missing++
		}
	}
	if missing > 0 {
		unmet = append(unmet, fmt.Sprintf("%d of the 6 `queue/v2/*` methods are not advertised", missing))
	}
	return unmet
}
