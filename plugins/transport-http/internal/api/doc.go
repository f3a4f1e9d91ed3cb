// Package api is the transport's HTTP surface: a chi router that turns
// REST requests into control-socket calls and control streams into
// Server-Sent Events.
//
// Every route is one row of a table (routes_*.go). The same rows register
// the handlers and describe them in GET /api/v1/openapi.json (openapi*.go):
// parameters, request and data schemas, and every error status the route
// can answer, so the published description cannot drift from what is
// served. The tests validate every response against it.
//
// Responses use one envelope: {"ok":true,"data":…} or
// {"ok":false,"error":{"category","code","message"}}. Unlike the reference
// transport, which answered every daemon error with 502, a daemon error keeps
// its data.category and gets the status that category means (envelope.go).
//
// Requests pass, in order: panic recovery, the Host-header guard (DNS
// rebinding), the Origin check and CORS (exact origins only), bearer-token
// authentication, the body limit, and then the route, which validates its
// input before anything is sent to the daemon (security.go, request.go).
package api
