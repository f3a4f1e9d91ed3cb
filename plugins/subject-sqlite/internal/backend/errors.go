package backend

import (
	"context"
	"errors"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/subject-sqlite/internal/model"
	"github.com/animus-plugins/animus-plugins/plugins/subject-sqlite/internal/store"
)

// rpcError maps a failure to what the host sees (host-and-lifecycle
// §11.2): bad input -32602 invalid_request, a missing or out-of-scope
// subject -32602 not_found, a lock held past the busy timeout -32603
// unavailable, anything else -32603 with a generic message (the cause is
// logged, never sent: no SQL or paths on the wire).
func rpcError(err error, id string) error {
	var in *model.InputError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &in):
		e := pluginkit.InvalidParams("invalid params: %s", in.Msg)
		if in.Field != "" {
			e = e.WithData("field", in.Field)
		}
		return e
	case errors.Is(err, store.ErrNotFound):
		return pluginkit.NotFound("%s", id)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case store.IsBusy(err):
		return pluginkit.Unavailable("the database stayed locked by another process past the busy timeout; retry").Wrap(err)
	case store.IsConstraint(err):
		return pluginkit.InvalidParams("invalid params: the change conflicts with an existing subject").Wrap(err)
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
