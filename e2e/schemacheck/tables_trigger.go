package schemacheck

// Rows for trigger_backend plugins, checked against shared/reference/trigger-slack.md. Filled
// in by the plugin's issue.

// triggerResults maps trigger_backend methods to their result schemas.
var triggerResults = map[string]TypeRef{}

// triggerNotifications maps trigger_backend notifications to their params schemas.
var triggerNotifications = map[string]TypeRef{}
