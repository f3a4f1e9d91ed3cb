// Package subjects is a subject backend's JSON-RPC surface, written once
// for every database: it registers every verb (list, get, create, update,
// status, next, delete, schema, watch, unwatch, comments) under each
// configured kind and under subject/. Each method has a params type that
// reads the call's lenient JSON into model values (params.go); the
// handler scopes the call to the kinds the method may see, runs it against
// a storage.Store, and maps every failure to the subject backend's error
// codes and categories (errors.go). Rules (config.go) are the settings
// every backend shares, read under each plugin's own prefix.
package subjects
