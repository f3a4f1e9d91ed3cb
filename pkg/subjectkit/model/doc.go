// Package model holds the subject protocol's wire types (Subject,
// SubjectFilter, SubjectPatch, SubjectChangedEvent, …) and the pure rules
// that act on them: parsing lenient caller input (status aliases, string
// priorities, the CLI's extra patch keys), applying a patch, classifying a
// change, and matching a subject against a filter.
//
// It knows nothing of SQL or JSON-RPC, so the same rules serve both
// stores (which evaluate filters in SQL and must agree with Match), the watch
// hub (which filters events with Match) and the handlers. Bad input is
// reported as *InputError, which the handlers turn into -32602.
package model
