// Package trigger is the plugin's protocol surface: the trigger/watch,
// trigger/schema and trigger/ack handlers, the outbound slack/* methods,
// health/check, and the emitter that turns Slack deliveries into
// trigger/event notifications.
//
// The emitter is one goroutine fed by a bounded queue, so events leave in
// the order Slack delivered them and a slow host pushes back on the
// transport instead of growing memory. It maps a batch of deliveries,
// claims them in the seen-set in one transaction, and notifies the fresh
// ones. A claim whose notification cannot be written is released, so the
// next process emits Slack's redelivery. If the seen-set itself fails, the
// event is emitted anyway (a possible duplicate beats a lost request) and
// health reports the failure.
package trigger
