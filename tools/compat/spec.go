package compat

import "strings"

// SpecMethod is one host → plugin request the protocol defines for a kind.
// Notifications the plugin emits (subject/changed, trigger/event,
// log_storage/event, $/progress) are not listed: nothing calls them.
type SpecMethod struct {
	// Method is the wire name; "{kind}" stands for the plugin's first
	// subject kind (kind-scoped subject methods, subject.md §2).
	Method string
	// Ref is where the method is defined: "spec §N" is
	// shared/spec/animus-plugin-protocol.md, a file name is
	// shared/reference/<file>.
	Ref string
	// Note qualifies it (optional, since which version, who calls it).
	Note string
}

// Resolve substitutes the subject kind into a kind-scoped method.
func (m SpecMethod) Resolve(subjectKind string) string {
	return strings.ReplaceAll(m.Method, "{kind}", subjectKind)
}

// sharedMethods are the requests every plugin answers (spec §6).
func sharedMethods() []SpecMethod {
	return []SpecMethod{
		{Method: "health/check", Ref: "spec §6.1"},
		{Method: "$/ping", Ref: "spec §6.2", Note: "liveness; not a capability"},
	}
}

// SpecMethods returns the requests defined for a plugin_kind: the shared
// ones first, then the kind's in the order of the spec's tables. Methods a
// newer daemon line needs are listed even when no plugin of ours serves
// them, so the matrix shows the refusal.
func SpecMethods(kind string) []SpecMethod {
	var own []SpecMethod
	switch kind {
	case "subject_backend":
		// spec §5 table and §7.1; the verbs the daemon, CLI and runner
		// really send under <kind>/ and subject/ are subject.md §2, §3.2.
		own = []SpecMethod{
			{Method: "subject/list", Ref: "spec §7.1"},
			{Method: "subject/get", Ref: "spec §7.1"},
			{Method: "subject/update", Ref: "spec §7.1"},
			{Method: "subject/delete", Ref: "spec §7.1", Note: "optional, v0.1.8+; -32001 means soft-cancel fallback"},
			{Method: "subject/watch", Ref: "spec §7.1", Note: "optional; -32001 means list polling; the daemon's live watch"},
			{Method: "subject/schema", Ref: "spec §7.1"},
			{Method: "subject/create", Ref: "subject.md §2"},
			{Method: "subject/status", Ref: "subject.md §2"},
			{Method: "subject/next", Ref: "subject.md §2"},
			{Method: "subject/unwatch", Ref: "subject.md §3.2", Note: "the daemon sends it as a notification"},
			{Method: "{kind}/list", Ref: "subject.md §3.2", Note: "daemon control surface (per kind) and CLI"},
			{Method: "{kind}/get", Ref: "subject.md §3.2", Note: "control surface, CLI, runner fallback"},
			{Method: "{kind}/create", Ref: "subject.md §3.2", Note: "control surface and CLI"},
			{Method: "{kind}/update", Ref: "subject.md §3.2"},
			{Method: "{kind}/status", Ref: "subject.md §3.2"},
			{Method: "{kind}/next", Ref: "subject.md §3.2"},
			{Method: "{kind}/delete", Ref: "subject.md §3.2", Note: "CLI"},
			{Method: "{kind}/schema", Ref: "subject.md §2"},
			{Method: "{kind}/watch", Ref: "subject.md §2"},
			{Method: "{kind}/unwatch", Ref: "subject.md §2"},
			{Method: "{kind}/v2/list", Ref: "subject.md §3.2", Note: "newest router's actor surface; optional, -32601 expected"},
		}
	case "trigger_backend":
		// spec §5 table and §7.3.
		own = []SpecMethod{
			{Method: "trigger/watch", Ref: "spec §7.3"},
			{Method: "trigger/ack", Ref: "spec §7.3", Note: "optional; the daemon sends it as a notification (trigger-slack.md §1.3)"},
			{Method: "trigger/schema", Ref: "spec §7.3"},
		}
	case "log_storage_backend":
		// spec §5 table and §7.4.
		own = []SpecMethod{
			{Method: "log_storage/store", Ref: "spec §7.4"},
			{Method: "log_storage/query", Ref: "spec §7.4", Note: "optional; the daemon's daemon/logs reads through it"},
			{Method: "log_storage/tail", Ref: "spec §7.4", Note: "optional"},
			{Method: "log_storage/schema", Ref: "spec §7.4"},
		}
	case "transport_backend":
		// spec §5 table and §13.4.
		own = []SpecMethod{
			{Method: "transport/start", Ref: "spec §13.4"},
			{Method: "transport/shutdown", Ref: "spec §13.4"},
			{Method: "transport/schema", Ref: "spec §13.4"},
		}
	case "queue":
		// spec §5 table and §7.6 (queue protocol 0.3.2, daemons 0.5–0.6),
		// queue/next_deadline from queue.md §3.4 (missing from the spec's
		// table), and the six queue/v2 methods the 0.7.0-rc.34+ daemon
		// requires (queue.md §8, queue protocol 0.4.0).
		own = []SpecMethod{
			{Method: "queue/enqueue", Ref: "spec §7.6"},
			{Method: "queue/list", Ref: "spec §7.6"},
			{Method: "queue/lease", Ref: "spec §7.6"},
			{Method: "queue/stats", Ref: "spec §7.6"},
			{Method: "queue/next_deadline", Ref: "queue.md §3.4", Note: "0.3.2+; called by the daemon"},
			{Method: "queue/hold", Ref: "spec §7.6"},
			{Method: "queue/release", Ref: "spec §7.6"},
			{Method: "queue/release_pending", Ref: "spec §7.6", Note: "0.2.0+"},
			{Method: "queue/drop", Ref: "spec §7.6"},
			{Method: "queue/reorder", Ref: "spec §7.6"},
			{Method: "queue/mark_assigned", Ref: "spec §7.6"},
			{Method: "queue/completion", Ref: "spec §7.6"},
			{Method: "queue/v2/enqueue", Ref: "queue.md §8", Note: "queue protocol 0.4.0, required by Animus 0.7.0-rc.34+"},
			{Method: "queue/v2/lease", Ref: "queue.md §8", Note: "0.4.0, required by 0.7.0-rc.34+"},
			{Method: "queue/v2/lease/renew", Ref: "queue.md §8", Note: "0.4.0, required by 0.7.0-rc.34+"},
			{Method: "queue/v2/lease/recover", Ref: "queue.md §8", Note: "0.4.0, required by 0.7.0-rc.34+"},
			{Method: "queue/v2/completion", Ref: "queue.md §8", Note: "0.4.0, required by 0.7.0-rc.34+"},
			{Method: "queue/v2/release_pending", Ref: "queue.md §8", Note: "0.4.0, required by 0.7.0-rc.34+"},
		}
	case "durable_store":
		// spec §5 table and §7.7 (durable protocol 0.1.0).
		own = []SpecMethod{
			{Method: "durable/begin_workflow_run", Ref: "spec §7.7"},
			{Method: "durable/begin_step", Ref: "spec §7.7"},
			{Method: "durable/commit_step", Ref: "spec §7.7"},
			{Method: "durable/abandon_step", Ref: "spec §7.7"},
			{Method: "durable/recover_in_flight", Ref: "spec §7.7"},
			{Method: "durable/query_run", Ref: "spec §7.7"},
		}
	case "notifier":
		// spec §5 table and §7.9.
		own = []SpecMethod{
			{Method: "notifier/notify", Ref: "spec §7.9"},
			{Method: "notifier/flush", Ref: "spec §7.9", Note: "optional; called on the daemon's tick when supports_flush"},
			{Method: "notifier/schema", Ref: "spec §7.9"},
		}
	default:
		return nil
	}
	return append(sharedMethods(), own...)
}
