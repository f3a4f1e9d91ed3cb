package pluginkit

import (
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"
)

// LogLevelEnv selects the stderr log level (debug, info, warn, error). It is
// added to every plugin's env_required so the daemon forwards it. The
// default is warn: the daemon logs every stderr line at WARN, so a quiet
// plugin is a polite one.
const LogLevelEnv = "ANIMUS_PLUGIN_LOG_LEVEL"

// NewLogger returns the JSON stderr logger Main installs: level from
// LogLevelEnv, and the values of the plugin's sensitive env vars replaced
// by [REDACTED] wherever they appear in a message or a string attribute.
func NewLogger(w io.Writer, env []EnvVar) *slog.Logger {
	return newLogger(w, newRedactor(env))
}

func newLogger(w io.Writer, r *redactor) *slog.Logger {
	opts := &slog.HandlerOptions{
		Level: parseLevel(os.Getenv(LogLevelEnv)),
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			switch a.Value.Kind() {
			case slog.KindString:
				if s := a.Value.String(); r.scrub(s) != s {
					a.Value = slog.StringValue(r.scrub(s))
				}
			case slog.KindAny:
				if err, ok := a.Value.Any().(error); ok {
					a.Value = slog.StringValue(r.scrub(err.Error()))
				}
			}
			return a
		},
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func parseLevel(s string) slog.Level {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug
	case "info":
		return slog.LevelInfo
	case "error":
		return slog.LevelError
	default:
		return slog.LevelWarn
	}
}

// redactor removes secret values from text bound for logs or the wire.
// Main shares one between the logger and the connection, so a secret
// added at run time (Peer.AddSecret) is scrubbed from both.
type redactor struct {
	mu      sync.RWMutex
	secrets []string
}

func newRedactor(env []EnvVar) *redactor {
	r := &redactor{}
	for _, e := range env {
		if e.Sensitive {
			r.add(os.Getenv(e.Name))
		}
	}
	return r
}

// add registers a secret value. Very short values would redact ordinary
// words; nobody's secret is four characters long.
func (r *redactor) add(secret string) {
	if len(secret) < 5 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.secrets {
		if s == secret {
			return
		}
	}
	r.secrets = append(r.secrets, secret)
}

func (r *redactor) scrub(s string) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, secret := range r.secrets {
		s = strings.ReplaceAll(s, secret, "[REDACTED]")
	}
	return s
}

// absPath matches absolute file paths so last_error does not publish the
// layout of the operator's disk.
var absPath = regexp.MustCompile(`(^|[\s"'=:(])(/[^\s"':,;)]+)+`)

// summary is the form of an internal error that health/check may show:
// secrets and absolute paths removed, at most 200 bytes.
func (r *redactor) summary(s string) string {
	s = absPath.ReplaceAllString(r.scrub(s), "$1<path>")
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}
