package pgkit

import (
	"net/url"
	"strings"
)

// Password returns the password written in dsn, or "" if none. Both libpq
// forms are understood: a URL (postgres://user:secret@host/db, or
// ?password=secret in its query, which wins as it does in libpq) and
// key=value (password=secret or password='se cret', with libpq's
// backslash escapes). Plugins register the result with their log
// redactor before anything can log an error that quotes the DSN. A
// password from PGPASSWORD or a passfile is not in the DSN and not
// returned.
func Password(dsn string) string {
	s := strings.TrimSpace(dsn)
	if strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") {
		return urlPassword(s)
	}
	return keywordValues(s)["password"]
}

// urlPassword parses by hand rather than with net/url, which rejects some
// URLs libpq accepts (several hosts, unusual characters in the password).
func urlPassword(s string) string {
	rest := s[strings.Index(s, "://")+3:]
	authority, query := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
		query = rest[i:]
	}
	if i := strings.IndexByte(query, '?'); i >= 0 {
		q := query[i+1:]
		if j := strings.IndexByte(q, '#'); j >= 0 {
			q = q[:j]
		}
		if vals, err := url.ParseQuery(q); err == nil && vals.Get("password") != "" {
			return vals.Get("password")
		}
	}
	at := strings.LastIndexByte(authority, '@')
	if at < 0 {
		return ""
	}
	_, pw, ok := strings.Cut(authority[:at], ":")
	if !ok {
		return ""
	}
	if u, err := url.PathUnescape(pw); err == nil {
		return u
	}
	return pw
}

// keywordValues parses libpq's key=value form: spaces may surround '=',
// a value is single-quoted or runs to the next space, and a backslash
// escapes the next character in either. Malformed input yields what was
// parsed before the fault.
func keywordValues(s string) map[string]string {
	out := map[string]string{}
	i := 0
	skipSpace := func() {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
	}
	for {
		skipSpace()
		if i >= len(s) {
			return out
		}
		start := i
		for i < len(s) && s[i] != '=' && !isSpace(s[i]) {
			i++
		}
		key := s[start:i]
		skipSpace()
		if i >= len(s) || s[i] != '=' {
			return out
		}
		i++
		skipSpace()
		var v strings.Builder
		if i < len(s) && s[i] == '\'' {
			i++
			for i < len(s) && s[i] != '\'' {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				v.WriteByte(s[i])
				i++
			}
			if i >= len(s) {
				return out // unterminated quote
			}
			i++
		} else {
			for i < len(s) && !isSpace(s[i]) {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				v.WriteByte(s[i])
				i++
			}
		}
		out[key] = v.String()
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
