// Package webhooksig signs and verifies the HMAC-SHA256 signatures that
// animus-notifier-webhook puts on its deliveries, in the three styles it
// can send:
//
//   - Standard Webhooks (https://www.standardwebhooks.com): headers
//     webhook-id, webhook-timestamp and webhook-signature ("v1,<base64>"
//     over id + "." + timestamp + "." + body), the default;
//   - GitHub style: X-Hub-Signature-256 = "sha256=<hex>" over the body;
//   - Stripe style: <Name>-Signature = "t=<unix>,v1=<hex>" over
//     timestamp + "." + body.
//
// The package is public so a receiver written in Go can verify deliveries
// with the same code the plugin signs with. Verification compares every
// candidate signature in constant time (hmac.Equal) and rejects
// timestamps outside a tolerance window, which defeats replays of captured
// requests. Secrets may hold several whitespace-separated keys: the plugin
// signs with each (key rotation) and a receiver accepts any of them.
//
// It depends on the standard library only.
package webhooksig
