package trigger

import (
	"context"
	"strings"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/mapping"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/store"
)

// AckParams are TriggerAckParams. The daemon sends status queued,
// unmatched or shutdown; the protocol also names dispatched, skipped and
// failed; any other string is kept as sent.
type AckParams struct {
	EventID string `json:"event_id"`
	Status  string `json:"status,omitempty"`
}

// Validate requires the event id.
func (p AckParams) Validate() error {
	if strings.TrimSpace(p.EventID) == "" {
		return pluginkit.InvalidParams("event_id must not be empty")
	}
	return nil
}

// AckResult is the spec's reply to a trigger/ack request.
type AckResult struct {
	EventID string `json:"event_id"`
	Acked   bool   `json:"acked"`
}

// Ack is trigger/ack sent as a request (spec §7.3): the status is
// recorded and the reply is {event_id, acked: true}.
func (s *Service) Ack(ctx context.Context, p AckParams) (AckResult, error) {
	s.recordAck(ctx, p)
	return AckResult{EventID: p.EventID, Acked: true}, nil
}

// AckNotification is trigger/ack as the daemon sends it: a notification,
// recorded and never answered.
func (s *Service) AckNotification(ctx context.Context, p AckParams) error {
	s.recordAck(ctx, p)
	return nil
}

// recordAck stores the status on the event's seen-set entry. Socket Mode
// acks are per envelope and were sent on receipt, so there is nothing to
// tell Slack; an "unmatched" status is worth a warning, since it means the
// workflow trigger id does not match SLACK_TRIGGER_ID.
func (s *Service) recordAck(ctx context.Context, p AckParams) {
	s.stats.Acks.Add(1)
	status := p.Status
	if status == "" {
		status = "acked"
	}
	if status == "unmatched" {
		s.mu.Lock()
		rules := s.rules
		s.mu.Unlock()
		s.log.Warn("the host matched no enabled workflow trigger for an event; check SLACK_TRIGGER_ID against the workflow's trigger id",
			"event_id", p.EventID, "trigger_ids", []string{rules.MentionTriggerID, rules.DMTriggerID})
	}
	known, err := s.withStore(func(ctx context.Context, st *store.Store) ([]bool, error) {
		ok, err := st.RecordAck(ctx, p.EventID, status)
		return []bool{ok}, err
	})
	switch {
	case err != nil:
		s.log.Debug("ack not recorded", "event_id", p.EventID, "status", status, "error", err)
	case !known[0]:
		s.log.Debug("ack for an event this plugin did not emit", "event_id", p.EventID, "status", status)
	default:
		s.log.Debug("ack recorded", "event_id", p.EventID, "status", status)
	}
}

// Schema is trigger/schema. It claims only what the plugin does: events
// are deduplicated (the seen-set) and acks are handled, but a cursor is
// not kept, so there is no resume.
func (s *Service) Schema(ctx context.Context, _ struct{}) (SchemaResult, error) {
	return SchemaResult{Kinds: mapping.Kinds, SupportsResume: false, SupportsDedup: true, SupportsAck: true}, nil
}

// SchemaResult is TriggerSchema; every field is always present.
type SchemaResult struct {
	Kinds          []string `json:"kinds"`
	SupportsResume bool     `json:"supports_resume"`
	SupportsDedup  bool     `json:"supports_dedup"`
	SupportsAck    bool     `json:"supports_ack"`
}
