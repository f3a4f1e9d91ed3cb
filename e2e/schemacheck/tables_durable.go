package schemacheck

// Rows for durable_store plugins, checked against shared/reference/durable.md
// §3.4: every durable method's result is the crate's response type itself,
// with no wrapper object around it.

// durableResults maps durable_store methods to their result schemas.
var durableResults = map[string]TypeRef{
	"durable/begin_workflow_run": {DurableProtocol, "BeginWorkflowRunResponse"},
	"durable/begin_step":         {DurableProtocol, "BeginStepResponse"},
	"durable/commit_step":        {DurableProtocol, "CommitStepResponse"},
	"durable/abandon_step":       {DurableProtocol, "AbandonStepResponse"},
	"durable/recover_in_flight":  {DurableProtocol, "RecoverInFlightResponse"},
	"durable/query_run":          {DurableProtocol, "QueryRunResponse"},
}
