// Package backend is the plugin's JSON-RPC surface: it registers every
// verb (list, get, create, update, status, next, delete, schema, watch,
// unwatch, comments) under each configured kind and under subject/, turns
// each call's lenient params into model values, scopes it to the kinds
// the method may see, runs it against the store, and maps every failure
// to the subject backend's error codes and categories.
package backend
