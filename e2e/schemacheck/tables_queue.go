package schemacheck

// Rows for queue plugins, checked against shared/reference/queue.md (§2.5,
// §3.3, §3.4): each of these results is exactly the named type on the
// wire.
//
// queue/list, queue/lease and queue/v2/lease are left out on purpose: their entries carry a
// SubjectDispatch whose SubjectRef is usually in the legacy externally
// tagged form ({"Task":{"id":…}}), which the derived schema does not know
// (shared/schemas/README.md). The queue conformance suite validates them
// against QueueListResponse / QueueLeaseResponse after normalising the
// legacy forms to the generic one.

// queueResults maps queue methods to their result schemas.
var queueResults = map[string]TypeRef{
	"queue/enqueue":         {QueueProtocol, "QueueEnqueueResponse"},
	"queue/stats":           {QueueProtocol, "QueueStats"},
	"queue/next_deadline":   {QueueProtocol, "QueueNextDeadlineResponse"},
	"queue/hold":            {QueueProtocol, "QueueMutationResponse"},
	"queue/release":         {QueueProtocol, "QueueMutationResponse"},
	"queue/drop":            {QueueProtocol, "QueueMutationResponse"},
	"queue/mark_assigned":   {QueueProtocol, "QueueMutationResponse"},
	"queue/completion":      {QueueProtocol, "QueueMutationResponse"},
	"queue/reorder":         {QueueProtocol, "QueueReorderResponse"},
	"queue/release_pending": {QueueProtocol, "QueueReleasePendingResponse"},

	// The 0.4.0 generation-fenced surface (queue-v2.md §2): strict types,
	// so any extra key in a result fails here as it would in the daemon.
	"queue/v2/enqueue":         {QueueProtocol, "QueueEnqueueV2Response"},
	"queue/v2/lease/renew":     {QueueProtocol, "QueueLeaseMutationResponse"},
	"queue/v2/lease/recover":   {QueueProtocol, "QueueLeaseMutationResponse"},
	"queue/v2/completion":      {QueueProtocol, "QueueLeaseMutationResponse"},
	"queue/v2/release_pending": {QueueProtocol, "QueueLeaseMutationResponse"},
}
