// Package notifierwebhook tests the built animus-notifier-webhook binary
// through the fake host, the way the daemon's notifier dispatcher drives it
// (notifier-webhook.md §2): the notifier handshake with project_binding and
// all host capabilities false, notifier/notify per event within 15 s,
// notifier/flush {} per tick, and an environment holding only the
// allowlist, env_required and the variables named by *_env keys of
// notification_config. Receivers are real HTTP servers on 127.0.0.1 that
// answer scripted status sequences and verify signatures with
// webhooksig.VerifyStandard, the verifier the plugin publishes for Go
// receivers; what keeps it honest is its own test against the Standard
// Webhooks specification's test vector, so a signing bug it shared with the
// plugin would fail there.
//
// It also runs the conformance runner's generic and notifier suites against
// the binary, and the crash tests: SIGKILL with 1,000 undelivered events,
// and SIGKILL while a request is on the wire.
package notifierwebhook
