// Package config reads and validates the notifier's configuration: the
// reference plugin's notification_config (schema
// animus.daemon-notification-config.v1) from the file named by
// ANIMUS_NOTIFIER_CONFIG, or from the daemon's pm-config.json in the same
// places the reference looks, or a one-connector quick start built from
// ANIMUS_WEBHOOK_URL. It applies the reference's clamps, and it knows
// which environment variables hold secrets and in which forms their values
// may appear in an error text (SecretValues), so that the notifier can
// register them with pluginkit, which redacts them everywhere.
//
// Configuration holds env-var names only, never secret values; values are
// resolved when a delivery is sent (Resolve), so rotating a secret needs no
// restart and a missing one fails that delivery, not the whole plugin.
package config
