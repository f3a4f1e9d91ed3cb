package schemacheck

// Rows for log_storage_backend plugins, checked against shared/reference/logs-loki.md. Filled
// in by the plugin's issue.

// logStorageResults maps log_storage_backend methods to their result schemas.
var logStorageResults = map[string]TypeRef{}

// logStorageNotifications maps log_storage_backend notifications to their params schemas.
var logStorageNotifications = map[string]TypeRef{}
