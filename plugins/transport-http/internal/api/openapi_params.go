package api

import (
	"regexp"
)

// pathParamRE finds the {name} segments of a chi pattern.
var pathParamRE = regexp.MustCompile(`\{([^}/]+)\}`)

// param documents one parameter a handler reads. The handlers parse their
// own input (request.go); these rows only describe it, and the route tests
// check that what they describe is what the handlers accept.
type param struct {
	name     string
	in       string // "query" (when empty), "header" or "path"
	required bool
	desc     string
	schema   obj
	list     bool // repeated (?k=a&k=b) or comma-separated (?k=a,b)
}

func (p param) doc() obj {
	in := p.in
	if in == "" {
		in = "query"
	}
	d := obj{"name": p.name, "in": in, "required": p.required || in == "path", "schema": p.schema}
	if p.desc != "" {
		d["description"] = p.desc
	}
	if p.list {
		d["style"], d["explode"] = "form", true
	}
	return d
}

func qString(name, desc string) param {
	return param{name: name, desc: desc, schema: obj{"type": "string"}}
}

func qEnum(name string, values []string, desc string) param {
	return param{name: name, desc: desc, schema: enum(values, "")}
}

func qUint(name string, max uint64, desc string) param {
	return param{name: name, desc: desc, schema: obj{"type": "integer", "minimum": 0, "maximum": max}}
}

func qBool(name, desc string) param {
	return param{name: name, desc: desc, schema: obj{"type": "boolean"}}
}

func qTime(name, desc string) param {
	return param{name: name, desc: desc, schema: dateTime("")}
}

// qList is a parameter read with query.list: repeated, comma-separated, or
// both.
func qList(name string, items obj, desc string) param {
	return param{name: name, desc: desc + " (repeat the parameter or separate values with commas)",
		schema: arrayOf(items, ""), list: true}
}

// listDocs describes listParams (workflow/list, queue/list).
func listDocs(statuses []string) []param {
	return []param{
		qEnum("status", statuses, "Only entries with this status"),
		qString("cursor", "The next_cursor of the previous page"),
		qUint("limit", maxListLimit, "Page size"),
	}
}

// kindsParam describes workflowEvents' kinds filter.
func kindsParam() param {
	return qList("kinds", obj{"type": "string"}, "Only events of these kinds")
}

// subjectListDocs describes buildSubjectList: the query string of a
// SubjectFilter.
func subjectListDocs() []param {
	strs := obj{"type": "string"}
	kinds := qList("kind", strs, "Subject kinds to list; at least one is required")
	kinds.required = true
	return []param{
		kinds,
		qList("status", enum(subjectStatuses, ""), "Only these statuses"),
		qList("assignee", strs, "Only these assignees"),
		qList("labels_any", strs, "Subjects with at least one of these labels"),
		qList("labels_all", strs, "Subjects with all of these labels"),
		qTime("updated_since", "Only subjects updated at or after this time"),
		qString("cursor", "The next_cursor of the previous page"),
		qUint("limit", maxListLimit, "Suggested page size"),
		qString("native_status", "Only subjects with this backend-native status"),
		qString("dispatch_label", "Only subjects with this dispatch label"),
		qString("has_attachment_kind", "Only subjects with an attachment of this kind"),
	}
}

// subjectIDParam is the {id} of the subject routes: a SubjectId, which the
// transport checks has the form <kind>:<id> before calling the daemon.
func subjectIDParam() param {
	return param{name: "id", in: "path", desc: "Subject id, <kind>:<id> (percent-encode reserved characters)",
		schema: obj{"type": "string", "pattern": "^[^:]+:.+$"}}
}

// parameters is the operation's parameter list: its path parameters (from
// the pattern, unless a row describes one), its query and header
// parameters, and the resume parameters of a resumable stream.
func (rt route) parameters() []any {
	given := map[string]param{}
	for _, p := range rt.params {
		if p.in == "path" {
			given[p.name] = p
		}
	}
	var out []any
	for _, m := range pathParamRE.FindAllStringSubmatch(rt.path, -1) {
		p, ok := given[m[1]]
		if !ok {
			p = param{name: m[1], in: "path", schema: nonBlank("")} // as pathParam checks
		}
		out = append(out, p.doc())
	}
	for _, p := range rt.params {
		if p.in != "path" {
			out = append(out, p.doc())
		}
	}
	if rt.streams() && rt.sse.resumable {
		resume := "The id of the last event received, <timestamp>|<id>: the stream replays what came after it"
		out = append(out,
			param{name: "Last-Event-ID", in: "header", desc: resume, schema: obj{"type": "string"}}.doc(),
			param{name: "last_event_id", desc: resume + " (for clients that cannot set headers)", schema: obj{"type": "string"}}.doc())
	}
	return out
}
