package subjects

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// scoped returns the kinds the target may be found in: the method's,
// narrowed by a "kind" param (naming a kind this method cannot see yields
// none). An id that can name no subject in them is not_found before the
// database is touched.
func (sc scope) scoped(t targetParams) ([]string, error) {
	kinds := sc.kinds()
	if t.kind != nil {
		kinds = slices.DeleteFunc(kinds, func(s string) bool { return s != *t.kind })
	}
	if !t.ref.possibleIn(kinds) {
		return nil, rpcError(storage.ErrNotFound, t.ref.raw)
	}
	return kinds, nil
}

func (sc scope) get(ctx context.Context, p targetParams) (*model.Subject, error) {
	kinds, err := sc.scoped(p)
	if err != nil {
		return nil, err
	}
	st, err := sc.app.opened(ctx)
	if err != nil {
		return nil, err
	}
	sub, err := st.Get(ctx, p.ref.native)
	if err == nil && !p.ref.visibleIn(kinds)(sub) {
		err = storage.ErrNotFound
	}
	return sub, rpcError(err, p.ref.raw)
}

func (sc scope) create(ctx context.Context, p createParams) (*model.Subject, error) {
	d := p.draft
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
	st, err := sc.app.opened(ctx)
	if err != nil {
		return nil, err
	}
	if d.Parent != nil {
		d.Parent = canonicalParent(ctx, st, *d.Parent)
	}
	native := ulid.Make().String()
	sub := d.Subject(kind+":"+native, kind, sc.app.cfg.Hints, time.Now().UTC())
	sub, err = st.Create(ctx, sub, native)
	return sub, rpcError(err, "")
}

// canonicalParent stores a parent that names one of our subjects by its
// canonical id, so children are found whatever form the caller used; any
// other value (another backend's id) is kept as given.
func canonicalParent(ctx context.Context, st storage.Store, id string) *string {
	if sub, err := st.Get(ctx, parseRef(id).native); err == nil {
		if parseRef(id).visibleIn([]string{sub.Kind})(sub) {
			return &sub.ID
		}
	}
	return &id
}

func (sc scope) update(ctx context.Context, p updateParams) (*model.Subject, error) {
	kinds, err := sc.scoped(p.targetParams)
	if err != nil {
		return nil, err
	}
	patch, err := p.patch()
	if err != nil {
		return nil, err
	}
	return sc.apply(ctx, p.ref, kinds, patch)
}

func (sc scope) status(ctx context.Context, p statusParams) (*model.Subject, error) {
	kinds, err := sc.scoped(p.targetParams)
	if err != nil {
		return nil, err
	}
	st, err := p.status()
	if err != nil {
		return nil, err
	}
	return sc.apply(ctx, p.ref, kinds, model.Patch{Status: &st})
}

// apply runs a patch in one store transaction.
func (sc scope) apply(ctx context.Context, ref idRef, kinds []string, p model.Patch) (*model.Subject, error) {
	st, err := sc.app.opened(ctx)
	if err != nil {
		return nil, err
	}
	if p.Parent.Value != nil {
		p.Parent.Value = canonicalParent(ctx, st, *p.Parent.Value)
	}
	hints := sc.app.cfg.Hints
	sub, err := st.Update(ctx, ref.native, ref.visibleIn(kinds), func(old *model.Subject) (storage.Change, error) {
		return storage.Change{New: p.Apply(old, hints, time.Now().UTC()), Comment: p.Comment}, nil
	})
	return sub, rpcError(err, ref.raw)
}

type okResult struct {
	OK bool `json:"ok"`
}

func (sc scope) delete(ctx context.Context, p targetParams) (*okResult, error) {
	kinds, err := sc.scoped(p)
	if err != nil {
		return nil, err
	}
	st, err := sc.app.opened(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := st.Delete(ctx, p.ref.native, p.ref.visibleIn(kinds)); err != nil {
		return nil, rpcError(err, p.ref.raw)
	}
	return &okResult{OK: true}, nil
}

// next is the ready subject with the highest priority, then the oldest;
// null when none. subject/next may name a kind; <kind>/next is its kind.
func (sc scope) next(ctx context.Context, p nextParams) (*model.Subject, error) {
	kinds := sc.kinds()
	if k := p.kind; k != nil && sc.kind == "" {
		if !slices.Contains(kinds, *k) {
			return nil, invalid("kind", "kind %q is not served by this plugin (served: %s)", *k, strings.Join(kinds, ", "))
		}
		kinds = []string{*k}
	}
	st, err := sc.app.opened(ctx)
	if err != nil {
		return nil, err
	}
	sub, err := st.Next(ctx, kinds)
	return sub, rpcError(err, "")
}

type commentsResult struct {
	Comments []storage.Comment `json:"comments"`
}

// comments is an extension: the comment log a patch's "comment" appends to.
func (sc scope) comments(ctx context.Context, p targetParams) (*commentsResult, error) {
	sub, err := sc.get(ctx, p)
	if err != nil {
		return nil, err
	}
	st, err := sc.app.opened(ctx)
	if err != nil {
		return nil, err
	}
	cs, err := st.Comments(ctx, sub.Seq)
	return &commentsResult{Comments: cs}, rpcError(err, p.ref.raw)
}
