package schemacheck

// Rows for transport_backend plugins, checked against shared/reference/transport-http.md. Filled
// in by the plugin's issue.

// transportResults maps transport_backend methods to their result schemas.
var transportResults = map[string]TypeRef{}
