package notifier

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/store"
)

// DeliverySchema is the webhook body's schema (the reference's).
const DeliverySchema = "animus.daemon.notification-delivery.v1"

// DeliveryKey is the reference's dedup key: sha256(event_id NUL
// connector_id NUL subscription_id), hex.
func DeliveryKey(eventID, connectorID, subscriptionID string) string {
	sum := sha256.Sum256([]byte(eventID + "\x00" + connectorID + "\x00" + subscriptionID))
	return hex.EncodeToString(sum[:])
}

// deliveryNamespace is the UUIDv5 namespace of delivery ids (a fixed
// random UUID; changing it would change every id).
var deliveryNamespace = [16]byte{0x6f, 0x3c, 0x1d, 0x52, 0x8e, 0x0b, 0x4b, 0x7a, 0x9c, 0x41, 0x2d, 0xe5, 0x70, 0x13, 0xa8, 0x96}

// DeliveryID is UUIDv5(namespace, delivery_key): deterministic, so a crash
// between sending and recording resends the same id, and a receiver that
// keys on it (Idempotency-Key, webhook-id) drops the duplicate.
func DeliveryID(deliveryKey string) string {
	h := sha1.New()
	h.Write(deliveryNamespace[:])
	h.Write([]byte(deliveryKey))
	u := h.Sum(nil)[:16]
	u[6] = (u[6] & 0x0f) | 0x50 // version 5
	u[8] = (u[8] & 0x3f) | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// webhookBody is the reference's delivery document.
type webhookBody struct {
	Schema         string    `json:"schema"`
	DeliveryID     string    `json:"delivery_id"`
	ConnectorID    string    `json:"connector_id"`
	SubscriptionID string    `json:"subscription_id"`
	Event          bodyEvent `json:"event"`
}

type bodyEvent struct {
	ID          string          `json:"id"`
	Seq         uint64          `json:"seq"`
	Timestamp   string          `json:"timestamp"`
	EventType   string          `json:"event_type"`
	ProjectRoot *string         `json:"project_root"`
	Data        json.RawMessage `json:"data"`
}

// slackBody is a Slack incoming-webhook message, as the reference sends it.
type slackBody struct {
	Text      string `json:"text"`
	Username  string `json:"username,omitempty"`
	Channel   string `json:"channel,omitempty"`
	IconEmoji string `json:"icon_emoji,omitempty"`
}

// body renders the exact bytes a connector sends. It is computed once, at
// enqueue, so every retry signs and sends the same bytes.
func body(conn *config.Connector, sub *config.Subscription, ev *Event, deliveryID string) ([]byte, error) {
	var v any
	if conn.Type == config.TypeSlack {
		v = slackBody{
			Text:     fmt.Sprintf("Animus daemon event '%s' (delivery: %s, event: %s)", ev.EventType, deliveryID, ev.ID),
			Username: conn.Username, Channel: conn.Channel, IconEmoji: conn.IconEmoji,
		}
	} else {
		v = webhookBody{
			Schema: DeliverySchema, DeliveryID: deliveryID, ConnectorID: conn.ID, SubscriptionID: sub.ID,
			Event: bodyEvent{ID: ev.ID, Seq: ev.Seq, Timestamp: ev.Timestamp, EventType: ev.EventType,
				ProjectRoot: ev.ProjectRoot, Data: ev.Data},
		}
	}
	// serde_json's rendering: a receiver comparing with the reference
	// plugin's bodies (or verifying a signature over them) sees "<", not
	// "\u003c".
	return rustjson.Marshal(v)
}

// BuildDeliveries turns an event into the outbox rows cfg routes it to.
func BuildDeliveries(cfg *config.Config, ev *Event) ([]store.Delivery, error) {
	rs := routes(cfg, ev)
	if len(rs) == 0 {
		return nil, nil
	}
	f := fieldsOf(ev.Data)
	quiet := strings.HasPrefix(ev.EventType, lifecyclePrefix)
	out := make([]store.Delivery, 0, len(rs))
	for _, r := range rs {
		key := DeliveryKey(ev.ID, r.conn.ID, r.sub.ID)
		id := DeliveryID(key)
		b, err := body(r.conn, r.sub, ev, id)
		if err != nil {
			return nil, fmt.Errorf("encode the delivery body: %w", err)
		}
		out = append(out, store.Delivery{
			DeliveryID: id, DeliveryKey: key, ProjectRoot: *ev.ProjectRoot, EventID: ev.ID, EventType: ev.EventType,
			WorkflowID: f.workflowID, TaskID: f.taskID, ConnectorID: r.conn.ID, ConnectorType: r.conn.Type,
			SubscriptionID: r.sub.ID, Quiet: quiet, Payload: b,
		})
	}
	return out, nil
}
