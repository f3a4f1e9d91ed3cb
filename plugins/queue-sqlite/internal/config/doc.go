// Package config reads the plugin's environment (every variable is declared
// in env_required, because the daemon forwards nothing else) and decides
// where a project's queue database lives. The serving plugin and the
// inspect command share it, so both always open the same file.
package config
