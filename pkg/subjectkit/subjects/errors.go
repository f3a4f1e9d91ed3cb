package subjects

import (
	"context"
	"errors"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// rpcError maps a failure to what the host sees (host-and-lifecycle
// §11.2): bad input -32602 invalid_request, a missing or out-of-scope
// subject -32602 not_found, a failure a retry may cure (a lock held past
// the timeout, an unreachable database) -32603 unavailable with the
// backend's reason, anything else -32603 with a generic message (the cause is
// logged, never sent: no SQL or paths on the wire).
func rpcError(err error, id string) error {
	var in *model.InputError
	// Before the context cases: a backend's own timeout (a server that
	// never answers) wraps a deadline too, yet is an outage, not the
	// caller's timeout.
	var ue *storage.UnavailableError
	switch {
	case errors.As(err, &ue):
		return pluginkit.Unavailable("%s", ue.Reason).Wrap(err)
	case err == nil:
		return nil
	case errors.As(err, &in):
		e := pluginkit.InvalidParams("invalid params: %s", in.Msg)
		if in.Field != "" {
			e = e.WithData("field", in.Field)
		}
		return e
	case errors.Is(err, storage.ErrNotFound):
		return pluginkit.NotFound("%s", id)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, storage.ErrConflict):
		return pluginkit.InvalidParams("invalid params: %s", storage.ErrConflict.Error()).Wrap(err)
	}

	var pe *pluginkit.Error
	if errors.As(err, &pe) {
		return err
	}
	return pluginkit.Internal(err)
}

func invalid(field, format string, args ...any) error {
	return pluginkit.InvalidParams("invalid params: "+format, args...).WithData("field", field)
}
