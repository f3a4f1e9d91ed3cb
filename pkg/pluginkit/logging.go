package pluginkit

import (
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
)

// LogLevelEnv selects the stderr log level (debug, info, warn, error). It is
// added to every plugin's env_required so the daemon forwards it. The
// default is warn: the daemon logs every stderr line at WARN, so a quiet
// plugin is a polite one.
const LogLevelEnv = "ANIMUS_PLUGIN_LOG_LEVEL"

// RedactedMarker replaces every registered secret in logs, error messages,
// last_error and any text a plugin passes through Peer.Redact.
const RedactedMarker = "[REDACTED]"

// newLogger returns the JSON stderr logger Main installs: level from
// LogLevelEnv, and every registered secret replaced by RedactedMarker
// wherever it appears in a message or a string attribute.
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

func newRedactor(env []EnvVar, secrets []string) *redactor {
	r := &redactor{}
	for _, e := range env {
		if e.Sensitive {
			r.add(os.Getenv(e.Name))
		}
	}
	for _, s := range secrets {
		r.add(s)
	}
	return r
}

// minSecretLen keeps very short values from redacting ordinary words.
const minSecretLen = 4

// add registers a secret value.
func (r *redactor) add(secret string) {
	if len(secret) < minSecretLen {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.secrets {
		if s == secret {
			return
		}
	}
	// Longest first: a secret that contains a shorter one must be
	// replaced whole, or the rest of it would stay visible.
	i, _ := slices.BinarySearchFunc(r.secrets, secret, func(a, b string) int { return len(b) - len(a) })
	r.secrets = slices.Insert(r.secrets, i, secret)
}

func (r *redactor) scrub(s string) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, secret := range r.secrets {
		s = strings.ReplaceAll(s, secret, RedactedMarker)
	}
	return s
}

// summary is the form of an internal error that health/check may show:
// secrets and absolute paths removed, at most 200 bytes.
func (r *redactor) summary(s string) string {
	s = hidePaths(r.scrub(s))
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}

// hidePaths replaces every absolute file path with "<path>", so last_error
// does not publish the layout of the operator's disk. A path is a '/' and
// at least one more byte up to whitespace or one of "':,;) , starting the
// text or right after whitespace or one of "'=:( (which stays). It does
// what the regexp (^|[\s"'=:(])(/[^\s"':,;)]+)+ → "$1<path>" did, without
// compiling one (and initializing the unicode tables it needs) in every
// process at start: that was most of pluginkit's package init.
func hidePaths(s string) string {
	var b []byte
	last := 0
	for i := 0; i < len(s); i++ {
		slash := i
		if i > 0 || s[0] != '/' {
			if strings.IndexByte(pathLead, s[i]) < 0 || i+1 >= len(s) || s[i+1] != '/' {
				continue
			}
			slash = i + 1
		}
		end := slash + 1
		for end < len(s) && strings.IndexByte(pathStop, s[end]) < 0 {
			end++
		}
		if end == slash+1 {
			continue
		}
		b = append(append(b, s[last:slash]...), "<path>"...)
		last, i = end, end-1
	}
	if b == nil {
		return s
	}
	return string(append(b, s[last:]...))
}

// The bytes that may precede a path (kept) and the ones that end it. \s
// is RE2's ASCII whitespace: tab, newline, form feed, carriage return and
// space.
const (
	pathLead = "\t\n\f\r \"'=:("
	pathStop = "\t\n\f\r \"':,;)"
)
