// Package backend is the plugin's JSON-RPC surface: it registers every
// verb (list, get, create, update, status, next, delete, schema, watch,
// unwatch, comments) under each configured kind and under subject/. Each
// method has a params type that reads the call's lenient JSON into model
// values (params.go); the handler scopes the call to the kinds the method
// may see, runs it against the store, and maps every failure to the
// subject backend's error codes and categories (errors.go).
package backend
