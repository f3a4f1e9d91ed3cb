package subjects

import (
	"context"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
)

// schemaResult is SubjectSchema. Every flag is true and truthful; the
// native statuses and hints come from the dispatch-hints setting.
type schemaResult struct {
	Kinds               []string       `json:"kinds"`
	StatusValues        []model.Status `json:"status_values"`
	SupportsWatch       bool           `json:"supports_watch"`
	SupportsCreate      bool           `json:"supports_create"`
	SupportsPagination  bool           `json:"supports_pagination"`
	SupportsDelete      bool           `json:"supports_delete"`
	NativeStatusValues  []string       `json:"native_status_values,omitempty"`
	StatusDispatchHints model.Hints    `json:"status_dispatch_hints,omitempty"`
}

func (sc scope) schema(context.Context, pluginkit.NoParams) (*schemaResult, error) {
	return &schemaResult{
		Kinds:               sc.app.cfg.Kinds,
		StatusValues:        model.Statuses,
		SupportsWatch:       true,
		SupportsCreate:      true,
		SupportsPagination:  true,
		SupportsDelete:      true,
		NativeStatusValues:  sc.app.cfg.Hints.NativeValues(),
		StatusDispatchHints: sc.app.cfg.Hints,
	}, nil
}
