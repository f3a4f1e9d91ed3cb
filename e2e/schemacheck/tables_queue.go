package schemacheck

// Rows for queue plugins, checked against shared/reference/queue.md. Filled
// in by the plugin's issue.

// queueResults maps queue methods to their result schemas.
var queueResults = map[string]TypeRef{}
