package schemacheck

// Rows for subject_backend plugins, checked against shared/reference/subject.md. Filled
// in by the plugin's issue.

// subjectResults maps subject_backend methods to their result schemas.
var subjectResults = map[string]TypeRef{}

// subjectNotifications maps subject_backend notifications to their params schemas.
var subjectNotifications = map[string]TypeRef{}
