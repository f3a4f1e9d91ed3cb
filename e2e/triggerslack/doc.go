// Package triggerslack tests the built animus-trigger-slack binary end to
// end: the fake host (e2e/fakehost) drives it over stdio the way the
// daemon and the testkit do, and a local fake Slack (e2e/fakeslack) plays
// Socket Mode and the Web API. http mode is driven with real signed
// requests to the plugin's own listener. Every frame is schema-checked and
// any stray stdout byte fails the test.
package triggerslack
