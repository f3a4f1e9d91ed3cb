// Package store is the persisted dedup seen-set: which Slack events this
// plugin has already emitted, for how long to remember them, and the
// status the host acked each with.
//
// The daemon does not deduplicate trigger events, and Slack delivers some
// twice (an unacked envelope is retried, a reconnect may replay, the Events
// API retries a slow 200, one message can arrive as both app_mention and
// message). A claim is one BEGIN IMMEDIATE transaction that checks every key
// of an event and inserts them all, so exactly one claimant wins even when
// several plugin processes share the database (a daemon restart racing the
// old process, or two projects pointing SLACK_STATE_DIR at one place).
//
// All SQL of the plugin lives here.
package store
