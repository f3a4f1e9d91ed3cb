// Package notifier is the plugin's behaviour on the wire: notifier/notify
// (match subscriptions, persist every delivery in one transaction, then a
// bounded synchronous attempt), notifier/flush (deliver the due rows of
// every project in the outbox, bounded per tick and per connector),
// notifier/schema, the operator methods notifier/dead_letters and
// notifier/replay_dead_letters, and health/check.
//
// Delivery is at least once: a row is committed before notify answers, a
// crash at any later point leaves it pending or inflight, and a restart
// resends it with the same delivery_id (also the Idempotency-Key and the
// Standard Webhooks webhook-id), so receivers can drop duplicates.
//
// Loops are cut three ways: the reference's guard (a connector never
// receives lifecycle events about itself), wildcard subscriptions do not
// match the plugin's own notification-delivery-* events unless a pattern
// names them, and deliveries of such events report no lifecycle events of
// their own.
//
// Secrets: the values of the variables a configuration names are
// registered with the host connection (pluginkit.Peer.AddSecret) as the
// notifier learns them, so pluginkit's one redaction, with its one marker,
// covers its logs, errors and last_error as well as the delivery error
// texts the notifier stores and reports (learnSecrets, errorText).
package notifier
