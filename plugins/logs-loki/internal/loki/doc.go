// Package loki is a small client for the parts of Grafana Loki's HTTP API
// the plugin uses: push (snappy-compressed protobuf or gzipped JSON),
// query_range, the websocket tail, /ready and the labels endpoint. It
// sends the tenant (X-Scope-OrgID) and basic or bearer auth on every
// request, trusts an optional CA file, and returns Loki's status and
// message in a *StatusError so callers can map them to protocol errors.
//
// It deliberately does not use grafana/loki-client-go (asynchronous,
// push-only, logs to stdout, global metrics) nor any package of
// grafana/loki (AGPL): the protobuf PushRequest is encoded by hand with
// protowire.
package loki
