package queue

import (
	"context"
	"errors"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
)

// Queue error codes (queue.md §3.6). -32201 and -32202 are reserved by the
// protocol but unused by the references, so they are unused here too.
const (
	CodeEntryNotPending      = -32203
	CodeReorderFailed        = -32204
	CodeLockFailed           = -32205
	CodeWorkflowIDMismatch   = -32206
	CodeProjectBinding       = -32207
	CodeEntryNotAssigned     = -32208
	CodeStaleFence           = -32209
	completionStorageFailure = pluginkit.CodeInvalidParams // the reference maps every completion failure to -32602
)

func errUnbound() error {
	return pluginkit.Errorf(pluginkit.CategoryInvalidRequest,
		"init_extensions.project_binding is required to bind a project root; this process was initialized without one").
		WithCode(CodeProjectBinding)
}

func errBinding(format string, args ...any) error {
	return pluginkit.Errorf(pluginkit.CategoryInvalidRequest, format, args...).WithCode(CodeProjectBinding)
}

// errNotPending is the references' -32203 for hold/release of an assigned
// entry and mark_assigned of a held one; actual_state is an addition.
func errNotPending(id, actual string) error {
	return pluginkit.Errorf(pluginkit.CategoryConflict, "queue entry %s is not in the expected pre-mutation status", id).
		WithCode(CodeEntryNotPending).WithData("actual_state", actual)
}

func errNotAssigned(id, actual string) error {
	return pluginkit.Errorf(pluginkit.CategoryConflict, "entry %s is in state '%s', expected 'assigned'", id, actual).
		WithCode(CodeEntryNotAssigned).WithData("actual_state", actual)
}

func errWorkflowIDCount(actual int, expected uint64) error {
	return pluginkit.Errorf(pluginkit.CategoryInvalidRequest, "workflow_ids.len()=%d did not match max=%d", actual, expected).
		WithCode(CodeWorkflowIDMismatch).WithData("actual", actual).WithData("expected", expected)
}

// errEntryNotFound is release_pending's not-found answer: -32602 without
// a queue code, exactly as the references send it.
func errEntryNotFound(id string) error {
	return pluginkit.Errorf(pluginkit.CategoryNotFound, "entry_id not found: %s", id)
}

func errCompletionStatus(status string) error {
	return pluginkit.InvalidParams("queue/completion failed: invalid completion status: '%s' (expected one of: completed, failed, cancelled)", status)
}

// storageError decides what the host sees when a transaction fails. Lock
// timeouts and an unreachable database are -32205 so a caller knows a
// retry may succeed, even when the backend's own deadline (a connect
// timeout) is what ended the wait; the request's own cancellation or
// deadline stays what pluginkit makes of it. Other failures keep the
// references' per-method codes and a message without SQL or paths (the
// cause goes to the log).
func (s *Service) storageError(ctx context.Context, method string, err error) error {
	var pe *pluginkit.Error
	var unavailable *storage.UnavailableError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pe), ctx.Err() != nil:
		return err
	case errors.As(err, &unavailable):
		logger(ctx).Warn("queue database unavailable", "method", method, "error", err)
		return pluginkit.Errorf(pluginkit.CategoryUnavailable, "%s", unavailable.Reason).
			WithCode(CodeLockFailed).Wrap(err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	e := pluginkit.Errorf(pluginkit.CategoryInternal, "%s failed: storage error", method).Wrap(err)
	switch method {
	case "queue/reorder":
		e = e.WithCode(CodeReorderFailed)
	case "queue/completion":
		e = e.WithCode(completionStorageFailure)
	default:
		return e // -32603: pluginkit logs it and records it for health/check
	}
	logger(ctx).Error("storage failure", "method", method, "error", err)
	return e
}

// errTicketed is -32209: an old-style call that would bypass the fence of
// a ticketed entry (queue-v2.md §2.12), no data, as in the reference.
func errTicketed(id string) error {
	return pluginkit.Errorf(pluginkit.CategoryConflict,
		"queue entry %s is owned by a generation-fenced lease; use queue/v2/*", id).WithCode(CodeStaleFence)
}
