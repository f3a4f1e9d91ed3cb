package notifier

import (
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/store"
)

// The reference's lifecycle event types.
const (
	EventEnqueued     = lifecyclePrefix + "enqueued"
	EventSent         = lifecyclePrefix + "sent"
	EventFailed       = lifecyclePrefix + "failed"
	EventDeadLettered = lifecyclePrefix + "dead-lettered"
)

// lifecycle builds one lifecycle event about d with the reference's data
// keys (delivery_id, event_id, connector_id, subscription_id, workflow_id,
// task_id) plus extra. It returns nil for quiet deliveries.
func lifecycle(eventType string, d *store.Delivery, extra map[string]any) *LifecycleEvent {
	if d.Quiet {
		return nil
	}
	data := map[string]any{
		"delivery_id":     d.DeliveryID,
		"event_id":        d.EventID,
		"connector_id":    d.ConnectorID,
		"subscription_id": d.SubscriptionID,
		"workflow_id":     d.WorkflowID,
		"task_id":         d.TaskID,
	}
	for k, v := range extra {
		data[k] = v
	}
	return &LifecycleEvent{EventType: eventType, ProjectRoot: d.ProjectRoot, Data: data}
}

// events collects lifecycle events, dropping nils, and is never nil (the
// wire wants [] rather than null).
type events []LifecycleEvent

func (e *events) add(evs ...*LifecycleEvent) {
	for _, ev := range evs {
		if ev != nil {
			*e = append(*e, *ev)
		}
	}
}

func (e events) list() []LifecycleEvent {
	if e == nil {
		return []LifecycleEvent{}
	}
	return e
}
