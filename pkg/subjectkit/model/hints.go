package model

// DispatchHint is StatusDispatchHint: a native status, the normalized
// bucket it maps into, and an optional workflow dispatch label.
type DispatchHint struct {
	NativeStatus  string  `json:"native_status"`
	MapsTo        Status  `json:"maps_to"`
	DispatchLabel *string `json:"dispatch_label,omitempty"`
	Description   *string `json:"description,omitempty"`
}

// Hints is the configured hint table (ANIMUS_SQLITE_DISPATCH_HINTS). The
// dispatch label of a subject is always derived from its native status
// through this table at the moment it is needed, never stored, so a
// configuration change can never leave stale labels behind.
type Hints []DispatchHint

// Lookup returns the hint for a native status.
func (h Hints) Lookup(native string) (DispatchHint, bool) {
	for _, x := range h {
		if x.NativeStatus == native {
			return x, true
		}
	}
	return DispatchHint{}, false
}

// Label resolves the dispatch label of a subject with native status
// native (nil when there is none).
func (h Hints) Label(native *string) *string {
	if native == nil {
		return nil
	}
	if x, ok := h.Lookup(*native); ok {
		return x.DispatchLabel
	}
	return nil
}

// NativesWithLabel lists the native statuses whose hint carries label: the
// SQL form of a dispatch_label filter is native_status IN (these).
func (h Hints) NativesWithLabel(label string) []string {
	var out []string
	for _, x := range h {
		if x.DispatchLabel != nil && *x.DispatchLabel == label {
			out = append(out, x.NativeStatus)
		}
	}
	return out
}

// NativeValues lists the configured native statuses, for
// SubjectSchema.native_status_values.
func (h Hints) NativeValues() []string {
	out := make([]string, 0, len(h))
	for _, x := range h {
		out = append(out, x.NativeStatus)
	}
	return out
}
