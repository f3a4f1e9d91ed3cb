package backend

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/animus-plugins/animus-plugins/plugins/subject-sqlite/internal/model"
	"github.com/animus-plugins/animus-plugins/plugins/subject-sqlite/internal/store"
)

// resolve reads {id, kind?} and returns the id and the kinds it may be
// found in. A "kind" param narrows subject/… to that kind; naming a kind
// this method cannot see yields no kinds (not found).
func (sc scope) resolve(raw json.RawMessage) (map[string]json.RawMessage, idRef, []string, error) {
	obj, err := model.Fields(raw)
	if err != nil {
		return nil, idRef{}, nil, rpcError(err, "")
	}
	ref, err := requireID(obj)
	if err != nil {
		return nil, idRef{}, nil, rpcError(err, "")
	}
	kinds := sc.kinds()
	if k, err := model.StringField(obj, "kind"); err != nil {
		return nil, idRef{}, nil, rpcError(err, "")
	} else if k != nil {
		kinds = slices.DeleteFunc(kinds, func(s string) bool { return s != *k })
	}
	if !ref.possibleIn(kinds) {
		return nil, idRef{}, nil, rpcError(store.ErrNotFound, ref.raw)
	}
	return obj, ref, kinds, nil
}

func (sc scope) get(ctx context.Context, raw json.RawMessage) (*model.Subject, error) {
	_, ref, kinds, err := sc.resolve(raw)
	if err != nil {
		return nil, err
	}
	sub, err := sc.app.store.Get(ctx, ref.native)
	if err == nil && !ref.visibleIn(kinds)(sub) {
		err = store.ErrNotFound
	}
	return sub, rpcError(err, ref.raw)
}

func (sc scope) create(ctx context.Context, raw json.RawMessage) (*model.Subject, error) {
	d, err := model.DecodeDraft(raw)
	if err != nil {
		return nil, rpcError(err, "")
	}
	kind := sc.kind
	switch {
	case d.Kind != nil && sc.kind != "" && *d.Kind != sc.kind:
		return nil, invalid("kind", "kind %q does not match the method's kind %q", *d.Kind, sc.kind)
	case d.Kind != nil && !slices.Contains(sc.app.cfg.Kinds, *d.Kind):
		return nil, invalid("kind", "kind %q is not served by this plugin (served: %s)", *d.Kind, strings.Join(sc.app.cfg.Kinds, ", "))
	case d.Kind != nil:
		kind = *d.Kind
	case kind == "":
		kind = sc.app.cfg.Kinds[0]
	}
	if d.Parent != nil {
		d.Parent = sc.app.canonicalParent(ctx, *d.Parent)
	}
	native := ulid.Make().String()
	sub := d.Subject(kind+":"+native, kind, sc.app.cfg.Hints, time.Now().UTC())
	sub, err = sc.app.store.Create(ctx, sub, native)
	return sub, rpcError(err, "")
}

// canonicalParent stores a parent that names one of our subjects by its
// canonical id, so children are found whatever form the caller used; any
// other value (another backend's id) is kept as given.
func (a *App) canonicalParent(ctx context.Context, id string) *string {
	if sub, err := a.store.Get(ctx, parseRef(id).native); err == nil {
		if parseRef(id).visibleIn([]string{sub.Kind})(sub) {
			return &sub.ID
		}
	}
	return &id
}

func (sc scope) update(ctx context.Context, raw json.RawMessage) (*model.Subject, error) {
	obj, ref, kinds, err := sc.resolve(raw)
	if err != nil {
		return nil, err
	}
	var p model.Patch
	if pr, ok := obj["patch"]; ok && string(pr) != "null" {
		p, err = model.DecodePatch(pr)
	} else {
		// No patch object: the top-level fields are the patch, as
		// animus-subject-default accepts.
		rest := make(map[string]json.RawMessage, len(obj))
		for k, v := range obj {
			if k != "id" && k != "kind" {
				rest[k] = v
			}
		}
		p, err = model.DecodePatchFields(rest)
	}
	if err != nil {
		return nil, rpcError(err, "")
	}
	return sc.apply(ctx, ref, kinds, p)
}

func (sc scope) status(ctx context.Context, raw json.RawMessage) (*model.Subject, error) {
	obj, ref, kinds, err := sc.resolve(raw)
	if err != nil {
		return nil, err
	}
	s, err := model.StringField(obj, "status")
	if err != nil {
		return nil, rpcError(err, "")
	}
	if s == nil {
		return nil, invalid("status", `"status" is required: one of ready, in-progress, blocked, done, cancelled`)
	}
	st, err := model.ParseStatus("status", *s)
	if err != nil {
		return nil, rpcError(err, "")
	}
	return sc.apply(ctx, ref, kinds, model.Patch{Status: &st})
}

// apply runs a patch in one store transaction.
func (sc scope) apply(ctx context.Context, ref idRef, kinds []string, p model.Patch) (*model.Subject, error) {
	if p.Parent.Value != nil {
		p.Parent.Value = sc.app.canonicalParent(ctx, *p.Parent.Value)
	}
	hints := sc.app.cfg.Hints
	sub, err := sc.app.store.Update(ctx, ref.native, ref.visibleIn(kinds), func(old *model.Subject) (store.Change, error) {
		return store.Change{New: p.Apply(old, hints, time.Now().UTC()), Comment: p.Comment}, nil
	})
	return sub, rpcError(err, ref.raw)
}

type okResult struct {
	OK bool `json:"ok"`
}

func (sc scope) delete(ctx context.Context, raw json.RawMessage) (*okResult, error) {
	_, ref, kinds, err := sc.resolve(raw)
	if err != nil {
		return nil, err
	}
	if _, err := sc.app.store.Delete(ctx, ref.native, ref.visibleIn(kinds)); err != nil {
		return nil, rpcError(err, ref.raw)
	}
	return &okResult{OK: true}, nil
}

// next is the ready subject with the highest priority, then the oldest;
// null when none. subject/next may name a kind; <kind>/next is its kind.
func (sc scope) next(ctx context.Context, raw json.RawMessage) (*model.Subject, error) {
	obj, err := model.Fields(raw)
	if err != nil {
		return nil, rpcError(err, "")
	}
	kinds := sc.kinds()
	if k, err := model.StringField(obj, "kind"); err != nil {
		return nil, rpcError(err, "")
	} else if k != nil && sc.kind == "" {
		if !slices.Contains(kinds, *k) {
			return nil, invalid("kind", "kind %q is not served by this plugin (served: %s)", *k, strings.Join(kinds, ", "))
		}
		kinds = []string{*k}
	}
	sub, err := sc.app.store.Next(ctx, kinds)
	return sub, rpcError(err, "")
}

type commentsResult struct {
	Comments []store.Comment `json:"comments"`
}

// comments is an extension: the comment log a patch's "comment" appends to.
func (sc scope) comments(ctx context.Context, raw json.RawMessage) (*commentsResult, error) {
	_, ref, kinds, err := sc.resolve(raw)
	if err != nil {
		return nil, err
	}
	sub, err := sc.app.store.Get(ctx, ref.native)
	if err == nil && !ref.visibleIn(kinds)(sub) {
		err = store.ErrNotFound
	}
	if err != nil {
		return nil, rpcError(err, ref.raw)
	}
	cs, err := sc.app.store.Comments(ctx, sub.Seq)
	return &commentsResult{Comments: cs}, rpcError(err, ref.raw)
}
