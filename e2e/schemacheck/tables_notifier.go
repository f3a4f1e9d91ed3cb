package schemacheck

// Rows for notifier plugins, checked against shared/reference/notifier-webhook.md
// §1: the three notifier methods answer their protocol types directly (no
// wrapper objects). The operator methods of animus-notifier-webhook
// (notifier/dead_letters, notifier/replay_dead_letters) have no upstream
// schema and are left out.

// notifierResults maps notifier methods to their result schemas.
var notifierResults = map[string]TypeRef{
	"notifier/notify": {NotifierProtocol, "NotifierNotifyResult"},
	"notifier/flush":  {NotifierProtocol, "NotifierFlushResult"},
	"notifier/schema": {NotifierProtocol, "NotifierSchema"},
}
