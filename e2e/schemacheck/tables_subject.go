package schemacheck

// Rows for subject_backend plugins, checked against shared/reference/subject.md.
//
// Only the kind-independent subject/… methods are listed. Their results
// really are these types (subject.md §2.3: get/update/create/status return
// a bare Subject — the spec's {"subject": …} wrapper would break the
// daemon; list a SubjectList; delete {ok}). The same shapes under
// <kind>/… cannot be listed here because the kind is configuration; tests
// of a subject plugin add them with Set.RegisterResult for their kinds.
// Left out on purpose: subject/next (a Subject or null), subject/watch
// ({"watching": true}, no schema), subject/unwatch ({ok}, no schema).

// subjectResults maps subject_backend methods to their result schemas.
var subjectResults = map[string]TypeRef{
	"subject/list":   {SubjectProtocol, "SubjectList"},
	"subject/get":    {SubjectProtocol, "Subject"},
	"subject/create": {SubjectProtocol, "Subject"},
	"subject/update": {SubjectProtocol, "Subject"},
	"subject/status": {SubjectProtocol, "Subject"},
	"subject/schema": {SubjectProtocol, "SubjectSchema"},
	"subject/delete": {SubjectProtocol, "DeleteSubjectResponse"},
}

// subjectNotifications maps subject_backend notifications to their params
// schemas. subject/changed carries {id: <watch request id>, event:
// SubjectChangedEvent} (subject.md §1); payloadFields points the check at
// params.event.
var subjectNotifications = map[string]TypeRef{
	"subject/changed": {SubjectProtocol, "SubjectChangedEvent"},
}
