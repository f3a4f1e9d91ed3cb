// Package config reads the plugin's environment (every variable is
// declared in env_required, since the daemon forwards nothing else). Load
// is strict and its error fails startup; the same call also returns a
// best-effort configuration, which --manifest uses because the daemon's
// probe runs with a scrubbed environment and must never fail.
package config
