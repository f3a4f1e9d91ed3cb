package schemacheck

// Rows for durable_store plugins, checked against shared/reference/durable.md. Filled
// in by the plugin's issue.

// durableResults maps durable_store methods to their result schemas.
var durableResults = map[string]TypeRef{}
