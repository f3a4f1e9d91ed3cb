package schemacheck

// Rows for notifier plugins, checked against shared/reference/notifier-webhook.md. Filled
// in by the plugin's issue.

// notifierResults maps notifier methods to their result schemas.
var notifierResults = map[string]TypeRef{}
