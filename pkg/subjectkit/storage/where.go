package storage

import (
	"strings"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
)

// Dialect is how a backend spells what SQL dialects do not share in a
// filter clause. Arg records a value and returns its placeholder; Where
// calls it in the order the placeholders appear in the text, so
// positional placeholders (SQLite's ?) line up.
type Dialect interface {
	Arg(v any) string
	// In is "col is one of vals" (vals non-empty).
	In(col string, vals []string) string
	// AttachmentKind is "s.attachments, a JSON array of attachments, holds
	// one whose kind is the value of placeholder ph".
	AttachmentKind(ph string) string
}

// Where renders f as a WHERE clause over subjects s, with label rows in
// subject_labels l. Both stores use it, so they agree on every filter;
// it must agree with model.Filter.Match field for field (storagetest
// holds the two to the same answers).
func Where(f *model.Filter, hints model.Hints, d Dialect) string {
	var conds []string
	if len(f.Kind) > 0 {
		conds = append(conds, d.In("s.kind", f.Kind))
	}
	if len(f.ScopeKinds) > 0 {
		conds = append(conds, d.In("s.kind", f.ScopeKinds))
	}
	if len(f.Status) > 0 {
		st := make([]string, len(f.Status))
		for i, s := range f.Status {
			st[i] = string(s)
		}
		conds = append(conds, d.In("s.status", st))
	}
	if len(f.Assignee) > 0 {
		conds = append(conds, d.In("s.assignee", f.Assignee))
	}
	if len(f.LabelsAny) > 0 {
		conds = append(conds, "EXISTS (SELECT 1 FROM subject_labels l WHERE l.seq = s.seq AND "+d.In("l.label", f.LabelsAny)+")")
	}
	if all := Dedupe(f.LabelsAll); len(all) > 0 {
		in := d.In("l.label", all)
		conds = append(conds, "(SELECT COUNT(*) FROM subject_labels l WHERE l.seq = s.seq AND "+in+") = "+d.Arg(len(all)))
	}
	if f.UpdatedSince != nil {
		conds = append(conds, "s.updated_at_ns >= "+d.Arg(f.UpdatedSince.UnixNano()))
	}
	if f.NativeStatus != nil {
		conds = append(conds, "s.native_status = "+d.Arg(*f.NativeStatus))
	}
	if f.DispatchLabel != nil {
		// Labels are derived from native statuses through the configured
		// hints, so the filter is a native_status set (empty: no match).
		if natives := hints.NativesWithLabel(*f.DispatchLabel); len(natives) > 0 {
			conds = append(conds, d.In("s.native_status", natives))
		} else {
			conds = append(conds, "1 = 0")
		}
	}
	if f.HasAttachmentKind != nil {
		// IS NOT NULL lets a partial index on attachments skip the
		// (usually many) subjects without attachments.
		conds = append(conds, "s.attachments IS NOT NULL AND "+d.AttachmentKind(d.Arg(*f.HasAttachmentKind)))
	}
	if len(conds) == 0 {
		return "1 = 1"
	}
	return strings.Join(conds, " AND ")
}
