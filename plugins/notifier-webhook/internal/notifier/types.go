package notifier

import (
	"encoding/json"
	"errors"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// Event is DaemonEventRecord. schema is opaque (the daemon's spelling and
// the spec's differ) and data is kept as raw JSON.
type Event struct {
	Schema      string          `json:"schema"`
	ID          string          `json:"id"`
	Seq         uint64          `json:"seq"`
	Timestamp   string          `json:"timestamp"`
	EventType   string          `json:"event_type"`
	ProjectRoot *string         `json:"project_root,omitempty"`
	Data        json.RawMessage `json:"data"`
}

// Validate checks what delivery needs: an id, a type and a project.
func (e *Event) Validate() error {
	switch {
	case e.ID == "":
		return pluginkit.InvalidParams("invalid params: event.id must be a non-empty string").WithData("field", "event.id")
	case e.EventType == "":
		return pluginkit.InvalidParams("invalid params: event.event_type must be a non-empty string").WithData("field", "event.event_type")
	case e.ProjectRoot == nil || *e.ProjectRoot == "":
		return pluginkit.InvalidParams("invalid params: event.project_root is required: deliveries are kept per project").
			WithData("field", "event.project_root")
	}
	if len(e.Data) == 0 {
		e.Data = json.RawMessage("null")
	}
	return nil
}

// NotifyParams is NotifierNotifyParams.
type NotifyParams struct {
	Event *Event `json:"event"`
}

// Validate requires the event.
func (p *NotifyParams) Validate() error {
	if p.Event == nil {
		return pluginkit.InvalidParams("invalid params: field %q is required", "event").WithData("field", "event")
	}
	return p.Event.Validate()
}

// NotifyResult is NotifierNotifyResult.
type NotifyResult struct {
	Accepted        bool             `json:"accepted"`
	Delivered       int              `json:"delivered"`
	LifecycleEvents []LifecycleEvent `json:"lifecycle_events"`
}

// LifecycleEvent is NotifierLifecycleEvent.
type LifecycleEvent struct {
	EventType   string         `json:"event_type"`
	ProjectRoot string         `json:"project_root,omitempty"`
	Data        map[string]any `json:"data"`
}

// FlushParams is NotifierFlushParams; the daemon always sends {}.
type FlushParams struct {
	ProjectRoot *string `json:"project_root"`
}

// FlushResult is NotifierFlushResult.
type FlushResult struct {
	LifecycleEvents []LifecycleEvent `json:"lifecycle_events"`
}

// SchemaResult is NotifierSchema.
type SchemaResult struct {
	ConnectorKinds []string `json:"connector_kinds"`
	SupportsFlush  bool     `json:"supports_flush"`
}

// ReplayParams selects dead letters to send again.
type ReplayParams struct {
	ProjectRoot string   `json:"project_root,omitempty"`
	DeliveryIDs []string `json:"delivery_ids,omitempty"`
	All         bool     `json:"all,omitempty"`
}

// maxReplayIDs bounds one replay request (a SQL parameter list).
const maxReplayIDs = 1000

// Validate requires exactly one of delivery_ids and all.
func (p *ReplayParams) Validate() error {
	switch {
	case p.All && len(p.DeliveryIDs) > 0:
		return errors.New("give either delivery_ids or all, not both")
	case !p.All && len(p.DeliveryIDs) == 0:
		return errors.New("give delivery_ids (a non-empty list) or all: true")
	case len(p.DeliveryIDs) > maxReplayIDs:
		return errors.New("at most 1000 delivery_ids per call")
	}
	return nil
}

// ReplayResult reports what a replay did.
type ReplayResult struct {
	Replayed    int      `json:"replayed"`
	DeliveryIDs []string `json:"delivery_ids"`
	NotFound    []string `json:"not_found"`
}

// DeadLettersParams filters notifier/dead_letters.
type DeadLettersParams struct {
	ProjectRoot string `json:"project_root,omitempty"`
	Limit       int    `json:"limit,omitempty"`
}

// Validate bounds the limit.
func (p *DeadLettersParams) Validate() error {
	if p.Limit < 0 || p.Limit > 1000 {
		return errors.New("limit must be between 1 and 1000")
	}
	if p.Limit == 0 {
		p.Limit = 100
	}
	return nil
}

// DeadLetter is one dead-lettered delivery as operators see it.
type DeadLetter struct {
	DeliveryID     string `json:"delivery_id"`
	EventID        string `json:"event_id"`
	EventType      string `json:"event_type"`
	ProjectRoot    string `json:"project_root"`
	ConnectorID    string `json:"connector_id"`
	SubscriptionID string `json:"subscription_id"`
	Attempts       int    `json:"attempts"`
	FailedAt       string `json:"failed_at"`
	LastError      string `json:"last_error,omitempty"`
	LastStatusCode int    `json:"last_status_code,omitempty"`
}

// DeadLettersResult lists dead letters, newest first.
type DeadLettersResult struct {
	DeadLetters []DeadLetter `json:"dead_letters"`
	Total       int          `json:"total"`
}
