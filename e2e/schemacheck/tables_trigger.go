package schemacheck

// Rows for trigger_backend plugins, checked against shared/reference/trigger-slack.md.
//
// trigger/event params are the flat animus-plugin-protocol TriggerEvent
// (§0.1, §1.2): the daemon decodes exactly that, and the legacy
// animus-trigger-protocol TriggerEvent (id, occurred_at, kind, nested
// under {id, event}) must fail here. trigger/schema answers the trigger
// crate's TriggerSchema (§1.4). trigger/watch ({"watching": true}) and the
// trigger/ack request reply ({"event_id", "acked"}) have no schema of their
// own, so they have no row.

// triggerResults maps trigger_backend methods to their result schemas.
var triggerResults = map[string]TypeRef{
	"trigger/schema": {TriggerProtocol, "TriggerSchema"},
}

// triggerNotifications maps trigger_backend notifications to their params schemas.
var triggerNotifications = map[string]TypeRef{
	"trigger/event": {PluginProtocol, "TriggerEvent"},
}
