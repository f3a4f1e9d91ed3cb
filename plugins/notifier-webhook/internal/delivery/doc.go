// Package delivery sends one outbox row over HTTP and classifies what
// happened: delivered, worth retrying (408, 425, 429, 5xx, network errors,
// timeouts), permanently refused (other 4xx, refused redirects) or
// impossible as configured. It builds the signed request (Standard
// Webhooks by default, GitHub or Stripe style on request), adds the
// idempotency and tracing headers, reads at most a small part of the
// response, and reports error text only after passing it through the
// caller's redaction function (it never quotes a request URL). It also
// computes retry delays: exponential backoff with full jitter, or the
// receiver's Retry-After, capped.
//
// It knows nothing of SQLite or of the protocol; the notifier package
// decides what an outcome does to a row.
package delivery
