// Package config reads the plugin's LOKI_* environment variables into a
// validated Config. A missing LOKI_URL is not an error here: the plugin
// still starts, reports itself unhealthy and answers store, query and tail
// with "unavailable" naming the variable, as the daemon expects of a
// backend that is installed but not configured. Malformed values are
// errors, so a typo fails loudly at start instead of on the first call.
package config
