// Package transporthttp tests animus-transport-http end to end: the built
// binary driven over stdio by the fake host as the daemon drives a
// transport, real HTTP requests to the address it binds, and a fake control
// socket (e2e/fakedaemon) behind it. Tests cover the lifecycle (start never
// dials, bind failures, second start, draining shutdown, health), every
// route with its status and envelope, authentication, CORS, the Host guard
// and limits, SSE streams with reconnection, and daemon faults.
package transporthttp
