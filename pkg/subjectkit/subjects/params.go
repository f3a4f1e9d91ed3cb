package subjects

import (
	"encoding/json"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
)

// The params types below read their own JSON (pluginkit.ParamsDecoder):
// callers send lenient shapes (a bare filter or {filter}, a patch object
// or top-level patch fields, ids as text, numbers as strings) that
// encoding/json cannot express. Every failure is returned already mapped
// to the *pluginkit.Error the host sees (rpcError), so pluginkit sends it
// as is: -32602 invalid_request with data.field naming the key.
//
// What depends on the method's kind scope (an id no kind in scope can
// name, a kind this method does not serve) is checked by the handlers,
// which alone know the scope.

// Each params type must read its own JSON: without DecodeParams, pluginkit
// would fall back to encoding/json, which fills no unexported field and
// would let every call through empty.
var (
	_ pluginkit.ParamsDecoder = (*targetParams)(nil)
	_ pluginkit.ParamsDecoder = (*updateParams)(nil)
	_ pluginkit.ParamsDecoder = (*statusParams)(nil)
	_ pluginkit.ParamsDecoder = (*createParams)(nil)
	_ pluginkit.ParamsDecoder = (*nextParams)(nil)
	_ pluginkit.ParamsDecoder = (*filterParams)(nil)
	_ pluginkit.ParamsDecoder = (*listParams)(nil)
	_ pluginkit.ParamsDecoder = (*unwatchParams)(nil)
)

// targetParams is {id, kind?}: the subject get, delete and comments name,
// and the start of update's and status's params.
type targetParams struct {
	ref idRef
	// kind narrows subject/… to one kind; nil when absent.
	kind *string
	// obj keeps the members for what update and status read only after
	// the scope check (see updateParams).
	obj map[string]json.RawMessage
}

// DecodeParams reads the object, its non-empty "id", then "kind", in the
// order their errors have always been reported.
func (p *targetParams) DecodeParams(raw []byte) error {
	obj, err := model.Fields(raw)
	if err != nil {
		return rpcError(err, "")
	}
	id, err := model.StringField(obj, "id")
	if err != nil {
		return rpcError(err, "")
	}
	if id == nil || *id == "" {
		return invalid("id", `"id" must be a non-empty subject id such as "task:01J…"`)
	}
	kind, err := model.StringField(obj, "kind")
	if err != nil {
		return rpcError(err, "")
	}
	*p = targetParams{ref: parseRef(*id), kind: kind, obj: obj}
	return nil
}

// updateParams is {id, kind?, patch} or {id, kind?, <patch fields>…}.
// The patch is read after the scope check, not in DecodeParams: an id no
// kind in scope can name is not_found whatever its patch holds, as the
// host has always been told.
type updateParams struct{ targetParams }

// patch decodes the "patch" object, or, without one, the top-level
// members other than id and kind, as animus-subject-default accepts.
func (p *updateParams) patch() (model.Patch, error) {
	var (
		pt  model.Patch
		err error
	)
	if raw, ok := p.obj["patch"]; ok && !rustjson.IsNull(raw) {
		pt, err = model.DecodePatch(raw)
	} else {
		rest := make(map[string]json.RawMessage, len(p.obj))
		for k, v := range p.obj {
			if k != "id" && k != "kind" {
				rest[k] = v
			}
		}
		pt, err = model.DecodePatchFields(rest)
	}
	return pt, rpcError(err, "")
}

// statusParams is {id, kind?, status}; status is read after the scope
// check for the same reason as update's patch.
type statusParams struct{ targetParams }

// status decodes the required "status", accepting the aliases.
func (p *statusParams) status() (model.Status, error) {
	s, err := model.StringField(p.obj, "status")
	if err != nil {
		return "", rpcError(err, "")
	}
	if s == nil {
		return "", invalid("status", `"status" is required: one of ready, in-progress, blocked, done, cancelled`)
	}
	st, err := model.ParseStatus("status", *s)
	return st, rpcError(err, "")
}

// createParams is a draft subject (subject.md §7.1).
type createParams struct{ draft model.Draft }

// DecodeParams reads the draft; its kind is checked against the scope by
// the handler.
func (p *createParams) DecodeParams(raw []byte) error {
	return decodeWith(&p.draft, model.DecodeDraft, raw)
}

// nextParams is nothing, or {kind?}.
type nextParams struct{ kind *string }

// DecodeParams reads the optional "kind".
func (p *nextParams) DecodeParams(raw []byte) error {
	obj, err := model.Fields(raw)
	if err != nil {
		return rpcError(err, "")
	}
	if p.kind, err = model.StringField(obj, "kind"); err != nil {
		return rpcError(err, "")
	}
	return nil
}

// filterParams is watch's params: nothing, a bare SubjectFilter, or the
// daemon's {kind?, filter?} (model.DecodeFilterParams).
type filterParams struct{ filter model.Filter }

// DecodeParams reads the filter in any of its shapes.
func (p *filterParams) DecodeParams(raw []byte) error {
	return decodeWith(&p.filter, model.DecodeFilterParams, raw)
}

// listParams is a filter plus its cursor, decoded to the sequence the
// page starts after.
type listParams struct {
	filterParams
	after int64
}

// DecodeParams reads the filter, then the cursor.
func (p *listParams) DecodeParams(raw []byte) error {
	if err := p.filterParams.DecodeParams(raw); err != nil {
		return err
	}
	after, err := decodeCursor(p.filter.Cursor)
	if err != nil {
		return err
	}
	p.after = after
	return nil
}

// unwatchParams is {watch_id} (or {id}): the watch request's id, a string
// or a number, as the key the watch was registered under.
type unwatchParams struct{ key string }

// DecodeParams takes the first non-null, non-empty of watch_id and id.
func (p *unwatchParams) DecodeParams(raw []byte) error {
	obj, err := model.Fields(raw)
	if err != nil {
		return rpcError(err, "")
	}
	for _, k := range []string{"watch_id", "id"} {
		if v, ok := obj[k]; ok && !rustjson.IsNull(v) {
			if key := watchKey(v); key != "" {
				p.key = key
				return nil
			}
		}
	}
	return invalid("watch_id", `"watch_id" is required: the id of the watch request, e.g. "7"`)
}

// decodeWith runs one of model's decoders into dst, mapping its failure to
// what the host sees.
func decodeWith[T any](dst *T, decode func(json.RawMessage) (T, error), raw []byte) error {
	v, err := decode(raw)
	if err != nil {
		return rpcError(err, "")
	}
	*dst = v
	return nil
}
