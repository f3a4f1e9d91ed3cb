package notifier

import (
	"encoding/json"
	"strings"

	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/config"
)

// lifecyclePrefix starts the type of every event this plugin reports back
// to the daemon (which logs them and hands them to notifiers again).
const lifecyclePrefix = "notification-delivery-"

// route is one (subscription, connector) an event goes to.
type route struct {
	sub  *config.Subscription
	conn *config.Connector
}

// eventFields are the parts of data that subscriptions filter on.
type eventFields struct {
	workflowID *string
	taskID     *string
	connector  string // data.connector_id, for the loop guard
}

func fieldsOf(data json.RawMessage) eventFields {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return eventFields{}
	}
	str := func(k string) *string {
		var s string
		if raw, ok := m[k]; ok && json.Unmarshal(raw, &s) == nil {
			return &s
		}
		return nil
	}
	f := eventFields{workflowID: str("workflow_id"), taskID: str("task_id")}
	if c := str("connector_id"); c != nil {
		f.connector = *c
	}
	return f
}

// routes returns where ev goes under cfg, in subscription order. A
// subscription matches when it and its connector are enabled, one of its
// event_types globs matches, and its project/workflow/task filters equal
// the event's. Lifecycle events (notification-delivery-*) additionally
// skip the connector they are about (the reference's loop guard) and are
// matched only by patterns that start with "notification-": a bare "*"
// does not forward the plugin's own bookkeeping.
func routes(cfg *config.Config, ev *Event) []route {
	f := fieldsOf(ev.Data)
	lifecycle := strings.HasPrefix(ev.EventType, lifecyclePrefix)
	var out []route
	for i := range cfg.Subscriptions {
		sub := &cfg.Subscriptions[i]
		conn := cfg.Connector(sub.ConnectorID)
		switch {
		case !sub.IsEnabled() || conn == nil || !conn.IsEnabled():
			continue
		case lifecycle && f.connector == sub.ConnectorID:
			continue
		case !typeMatches(sub.EventTypes, ev.EventType, lifecycle):
			continue
		case !equalFilter(sub.ProjectRoot, ev.ProjectRoot):
			continue
		case !equalFilter(sub.WorkflowID, f.workflowID), !equalFilter(sub.TaskID, f.taskID):
			continue
		}
		out = append(out, route{sub: sub, conn: conn})
	}
	return out
}

func typeMatches(patterns []string, eventType string, lifecycle bool) bool {
	for _, p := range patterns {
		if lifecycle && !strings.HasPrefix(p, "notification-") {
			continue
		}
		if glob(p, eventType) {
			return true
		}
	}
	return false
}

// equalFilter: a nil filter matches anything; a set one needs an equal
// value.
func equalFilter(filter, value *string) bool {
	return filter == nil || (value != nil && *filter == *value)
}

// glob matches s against pattern, where '*' stands for any run of
// characters (including none) and everything else is literal.
func glob(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return strings.HasSuffix(s, last)
}
