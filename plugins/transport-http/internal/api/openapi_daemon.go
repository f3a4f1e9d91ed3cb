package api

// daemonSchemas are the control protocol's results, which the transport
// passes through as data. The control protocol has no published JSON
// Schemas (only the subject, log and transport types do: wireschema/), so
// these follow the reference's listings (transport-http.md §1.3, §1.4):
// required fields are the ones listed without "?", and none is closed,
// because a newer daemon may add fields. Where the daemon's type differs
// from a plugin protocol's type of the same name (QueueEntry, QueueStats,
// PluginInfo), this is the control flavour.
func daemonSchemas() map[string]obj {
	return map[string]obj{
		"Empty": object("A unit result: {}", nil, obj{}),
		"DaemonStatus": object("daemon/status (no capabilities field)", []string{"running"}, obj{
			"running":        boolean(""),
			"pid":            count(""),
			"uptime_seconds": count(""),
			"version":        str(""),
			"project_root":   str(""),
			"log_path":       str(""),
		}),
		"DaemonHealthStatus": enum([]string{"healthy", "degraded", "unhealthy", "down"}, ""),
		"PluginHealth": object("", []string{"name", "kind", "status"}, obj{
			"name":       str(""),
			"kind":       str(""),
			"status":     str("healthy, degraded, unhealthy or down"),
			"uptime_ms":  count(""),
			"last_error": str(""),
		}),
		"DaemonHealth": object("daemon/health", []string{"status"}, obj{
			"status":     ref("DaemonHealthStatus"),
			"plugins":    arrayOf(ref("PluginHealth"), ""),
			"last_error": str(""),
		}),
		"AgentInfo": object("", []string{"session_id", "provider", "model", "started_at"}, obj{
			"session_id":  str(""),
			"provider":    str(""),
			"model":       str(""),
			"workflow_id": str(""),
			"phase_id":    str(""),
			"started_at":  dateTime(""),
		}),
		"AgentList":     object("daemon/agents", []string{"agents"}, obj{"agents": arrayOf(ref("AgentInfo"), "")}),
		"DaemonMetrics": withDesc(obj{"type": "object"}, "daemon/metrics: counters named by the daemon (an in-tree extra)"),
		"DaemonRunEvent": object("An item of daemon/events", []string{"id", "occurred_at", "kind", "payload"}, obj{
			"id":          str(""),
			"occurred_at": dateTime(""),
			"kind":        str(""),
			"payload":     anyJSON(""),
		}),
		"LogEntryList": arrayOf(ref("LogEntry"), "The recent batch of daemon/logs, oldest first"),

		"WorkflowStatus": enum(workflowStatuses, ""),
		"WorkflowRunSummary": object("", []string{"id", "definition", "status", "started_at"}, obj{
			"id":          str(""),
			"definition":  str(""),
			"status":      ref("WorkflowStatus"),
			"subject_id":  str(""),
			"started_at":  dateTime(""),
			"finished_at": dateTime(""),
		}),
		"WorkflowRun": obj{
			"description": "workflow/get: the summary's fields and the run's opaque detail",
			"allOf":       []any{ref("WorkflowRunSummary"), object("", nil, obj{"detail": anyJSON("Opaque run detail")})},
		},
		"WorkflowList": object("workflow/list", []string{"runs"}, obj{
			"runs":        arrayOf(ref("WorkflowRunSummary"), ""),
			"next_cursor": str(""),
		}),
		"WorkflowStarted": object("workflow/run and workflow/execute", []string{"workflow_id", "status", "started_at"}, obj{
			"workflow_id": str(""),
			"status":      ref("WorkflowStatus"),
			"started_at":  dateTime(""),
		}),
		"WorkflowEvent": object("An item of workflow/events", []string{"workflow_id", "kind", "payload", "occurred_at"}, obj{
			"workflow_id": str(""),
			"kind":        str(""),
			"payload":     anyJSON(""),
			"occurred_at": dateTime(""),
		}),

		"QueueEntryStatus": enum(queueStatuses, ""),
		"QueueEntry": object("The control socket's QueueEntry (not the queue plugin protocol's)",
			[]string{"id", "subject_id", "status", "priority", "enqueued_at"}, obj{
				"id":          str(""),
				"subject_id":  str(""),
				"status":      ref("QueueEntryStatus"),
				"priority":    intRange(0, 4, ""),
				"enqueued_at": dateTime(""),
				"hold_reason": str(""),
			}),
		"QueueList": object("queue/list", []string{"entries"}, obj{
			"entries":     arrayOf(ref("QueueEntry"), ""),
			"next_cursor": str(""),
		}),
		"QueueStats": object("queue/stats (the control socket's counters)",
			[]string{"ready", "held", "in_flight", "done_recent", "dropped_recent"}, obj{
				"ready":          count(""),
				"held":           count(""),
				"in_flight":      count(""),
				"done_recent":    count(""),
				"dropped_recent": count(""),
			}),

		"PluginInfo": object("The control socket's PluginInfo", []string{"name", "version", "kind", "signature_verified"}, obj{
			"name":               str(""),
			"version":            str(""),
			"kind":               str(""),
			"source":             str(""),
			"signature_verified": boolean(""),
			"description":        str(""),
			"binary_path":        str(""),
		}),
		"PluginList": object("plugin/list", []string{"plugins"}, obj{
			"plugins": arrayOf(ref("PluginInfo"), ""),
			"warnings": arrayOf(object("", []string{"plugin", "message"}, obj{"plugin": str(""), "message": str("")}),
				"Only with include_warnings=true"),
		}),
		"PluginRuntimeStatus": object("plugin/status: live runtime state (an in-tree extra)", []string{"protocol_version", "plugins"}, obj{
			"protocol_version": str(""),
			"plugins":          arrayOf(anyJSON(""), ""),
		}),
		"PluginInstallResult": object("plugin/install", []string{"plugin"}, obj{
			"plugin": ref("PluginInfo"),
			"steps":  arrayOf(str(""), ""),
		}),
		"PluginPing": object("plugin/ping", []string{"ok"}, obj{
			"ok":         boolean(""),
			"latency_ms": count(""),
			"error":      str(""),
		}),
		"PluginCallResult": anyJSON("The plugin's raw result: any JSON value"),
		"RegistryEntries": object("plugin/search and plugin/browse", []string{"entries"}, obj{
			"entries": arrayOf(obj{"type": "object"}, "Registry entries"),
		}),
		"PluginUpdates": object("plugin/update", []string{"updates"}, obj{
			"updates": arrayOf(object("", []string{"name", "from_version", "to_version", "applied"}, obj{
				"name":         str(""),
				"from_version": str(""),
				"to_version":   str(""),
				"applied":      boolean(""),
			}), ""),
		}),

		"SubjectNext": object("subject/next: no subject when none is ready", nil, obj{"subject": ref("Subject")}),

		"AgentRunResult": object("agent/run", []string{"session_id", "model", "output"}, obj{
			"session_id": str(""),
			"model":      str(""),
			"output":     str(""),
			"usage":      anyJSON(""),
		}),
		"AgentStatus": object("agent/status", []string{"session_id", "status", "provider", "model", "started_at"}, obj{
			"session_id":  str(""),
			"status":      enum([]string{"running", "completed", "failed", "cancelled"}, ""),
			"provider":    str(""),
			"model":       str(""),
			"started_at":  dateTime(""),
			"finished_at": dateTime(""),
			"last_error":  str(""),
		}),
	}
}
