package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Environment variables the plugin itself reads (declared in env_required).
const (
	EnvConfigPath = "ANIMUS_NOTIFIER_CONFIG"
	EnvDBPath     = "ANIMUS_NOTIFIER_DB_PATH"
	EnvWebhookURL = "ANIMUS_WEBHOOK_URL"
	EnvSecret     = "ANIMUS_WEBHOOK_SECRET"
)

// QuickStartConnector and QuickStartSubscription are the ids of the
// configuration ANIMUS_WEBHOOK_URL builds.
const (
	QuickStartConnector    = "webhook"
	QuickStartSubscription = "all-events"
)

// maxConfigBytes bounds a configuration file read; pm-config.json is small.
const maxConfigBytes = 4 << 20

// Loader finds and parses the configuration for a project, re-reading a
// file only when its size or modification time changed (the reference
// re-reads on every call; this keeps that behaviour at the cost of a stat).
type Loader struct {
	Getenv func(string) string
	// Home is the operator's home directory ("" disables the scoped
	// ~/.animus/<repo-scope>/daemon/pm-config.json location).
	Home string

	mu     sync.Mutex
	cache  map[string]cached
	scopes map[string]string // project root → canonical repo scope
}

type cached struct {
	size    int64
	modTime time.Time
	cfg     *Config
	err     error
}

// Load returns the configuration that applies to projectRoot, or nil when
// there is none (no file names a notification_config and
// ANIMUS_WEBHOOK_URL is unset). Order: ANIMUS_NOTIFIER_CONFIG, the scoped
// daemon pm-config.json, <project>/.animus/pm-config.json, the quick start.
func (l *Loader) Load(projectRoot string) (*Config, error) {
	if p := l.Getenv(EnvConfigPath); p != "" {
		cfg, err := l.file(p, EnvConfigPath)
		if err != nil {
			return nil, err
		}
		if cfg != nil {
			return cfg, nil
		}
		return nil, fmt.Errorf("%s: the file holds no notification_config", EnvConfigPath)
	}
	for _, p := range l.pmConfigPaths(projectRoot) {
		cfg, err := l.file(p, "pm-config.json")
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, err
		}
		if cfg != nil {
			return cfg, nil
		}
		break // the daemon reads the first pm-config.json it finds, so do we
	}
	if l.Getenv(EnvWebhookURL) != "" {
		return l.quickStart(), nil
	}
	return nil, nil
}

// pmConfigPaths lists the daemon's pm-config.json locations, scoped first.
func (l *Loader) pmConfigPaths(projectRoot string) []string {
	var out []string
	if l.Home != "" {
		out = append(out, filepath.Join(l.Home, ".animus", l.scope(projectRoot), "daemon", "pm-config.json"))
	}
	return append(out, filepath.Join(projectRoot, ".animus", "pm-config.json"))
}

// scope memoizes RepoScope: resolving symlinks costs a stat per path
// component, on every notify.
func (l *Loader) scope(projectRoot string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if sc, ok := l.scopes[projectRoot]; ok {
		return sc
	}
	if l.scopes == nil {
		l.scopes = map[string]string{}
	}
	sc := RepoScope(canonical(projectRoot))
	l.scopes[projectRoot] = sc
	return sc
}

// file parses path, or returns the cached result when the file is
// unchanged. A file that exists but has no notification_config yields
// (nil, nil); a missing file yields an error wrapping fs.ErrNotExist.
func (l *Loader) file(path, label string) (*Config, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: file not found: %w", label, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("%s: cannot read the file", label)
	}
	l.mu.Lock()
	c, ok := l.cache[path]
	l.mu.Unlock()
	if ok && c.size == st.Size() && c.modTime.Equal(st.ModTime()) {
		return c.cfg, c.err
	}
	cfg, err := parseFile(path, label, st.Size())
	l.mu.Lock()
	if l.cache == nil {
		l.cache = map[string]cached{}
	}
	l.cache[path] = cached{size: st.Size(), modTime: st.ModTime(), cfg: cfg, err: err}
	l.mu.Unlock()
	return cfg, err
}

func parseFile(path, label string, size int64) (*Config, error) {
	if size > maxConfigBytes {
		return nil, fmt.Errorf("%s: file larger than %d bytes", label, maxConfigBytes)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read the file", label)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object: %s", label, describeJSONError(err))
	}
	// pm-config.json nests the section; a dedicated file may be the section
	// itself.
	section := json.RawMessage(raw)
	if nested, ok := top["notification_config"]; ok {
		section = nested
	} else if label == "pm-config.json" {
		return nil, nil
	}
	if string(section) == "null" {
		return nil, nil
	}
	return Parse(section, label)
}

// quickStart is one webhook connector subscribed to every event, signed
// when ANIMUS_WEBHOOK_SECRET is set.
func (l *Loader) quickStart() *Config {
	c := Connector{Type: TypeWebhook, ID: QuickStartConnector, URLEnv: EnvWebhookURL, Signature: SignatureStandard,
		TimeoutSecs: DefaultTimeoutSecs, MaxConcurrency: DefaultMaxConcurrency}
	if l.Getenv(EnvSecret) != "" {
		c.SigningSecretEnv = EnvSecret
	}
	return &Config{
		Connectors:           []Connector{c},
		Subscriptions:        []Subscription{{ID: QuickStartSubscription, ConnectorID: QuickStartConnector, EventTypes: []string{"*"}}},
		RetryPolicy:          RetryPolicy{MaxAttempts: DefaultMaxAttempts, BaseDelaySecs: DefaultBaseDelaySecs, MaxDelaySecs: DefaultMaxDelaySecs},
		MaxDeliveriesPerTick: DefaultMaxPerTick,
		Source:               EnvWebhookURL,
	}
}

// RepoScope is the daemon's per-repository directory name: the sanitised
// base name, "-", and the first 6 bytes of sha256(canonical path) in hex.
func RepoScope(canonicalPath string) string {
	sum := sha256.Sum256([]byte(canonicalPath))
	base := []byte(filepath.Base(canonicalPath))
	for i, c := range base {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			base[i] = '-'
		}
	}
	return string(base) + "-" + hex.EncodeToString(sum[:6])
}

func canonical(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return p
}
