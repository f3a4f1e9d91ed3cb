package schemacheck

// Rows for log_storage_backend plugins, checked against
// shared/reference/logs-loki.md §1–§5: schema and query results are the
// bare types; log_storage/event is {id, entry|error} and its entry is
// checked (payloadFields in validate.go).

// logStorageResults maps log_storage_backend methods to their result schemas.
var logStorageResults = map[string]TypeRef{
	"log_storage/schema": {LogStorageProtocol, "LogStorageSchema"},
	"log_storage/query":  {LogStorageProtocol, "LogQueryResult"},
}

// logStorageNotifications maps log_storage_backend notifications to their params schemas.
var logStorageNotifications = map[string]TypeRef{
	"log_storage/event": {LogStorageProtocol, "LogEntry"},
}
