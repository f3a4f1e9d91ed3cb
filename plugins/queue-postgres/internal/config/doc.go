// Package config reads animus-queue-postgres's environment: where the
// shared database is (ANIMUS_QUEUE_PG_DSN or DATABASE_URL, both
// sensitive), which namespace inside it holds the queue, and the
// timeouts, plus the settings every queue backend shares (queue.Rules).
package config
