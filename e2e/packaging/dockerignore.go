package packaging

import (
	"path"
	"regexp"
	"strings"
)

// DockerIgnore is a parsed .dockerignore: the rules that decide which paths
// of the build context the Docker daemon never receives.
type DockerIgnore struct {
	rules []ignoreRule
}

type ignoreRule struct {
	re      *regexp.Regexp
	exclude bool // false for a "!pattern" exception
	pattern string
}

// ParseDockerIgnore follows Docker's rules: one pattern per line, '#'
// comments, a leading '!' re-includes, patterns are cleaned and relative
// to the context root, '**' spans directories, the last matching rule wins,
// and a path is also excluded when a parent directory is.
func ParseDockerIgnore(text string) *DockerIgnore {
	di := &DockerIgnore{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		exclude := true
		if strings.HasPrefix(line, "!") {
			exclude, line = false, strings.TrimSpace(line[1:])
		}
		p := strings.TrimPrefix(path.Clean("/"+line), "/")
		di.rules = append(di.rules, ignoreRule{re: globRegexp(p), exclude: exclude, pattern: line})
	}
	return di
}

// Excluded reports whether rel (slash-separated, relative to the context)
// is left out of the build context, and by which pattern.
func (di *DockerIgnore) Excluded(rel string) (bool, string) {
	rel = strings.TrimPrefix(path.Clean("/"+rel), "/")
	// Check the path and each of its parents; a parent's exclusion covers
	// everything under it.
	parts := strings.Split(rel, "/")
	for i := 1; i <= len(parts); i++ {
		candidate := strings.Join(parts[:i], "/")
		excluded, by := false, ""
		for _, r := range di.rules {
			if r.re.MatchString(candidate) {
				excluded, by = r.exclude, r.pattern
			}
		}
		if excluded {
			return true, by
		}
	}
	return false, ""
}

// globRegexp turns a Docker pattern into an anchored regexp: '**' any
// number of path elements, '*' and '?' within one element, [classes] kept.
func globRegexp(p string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case strings.HasPrefix(p[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(p[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				b.WriteString(regexp.QuoteMeta(p[i:]))
				i = len(p)
				continue
			}
			class := p[i+1 : i+end]
			if strings.HasPrefix(class, "^") || strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + class + "]")
			i += end
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		// A malformed class: match the text literally rather than nothing.
		return regexp.MustCompile("^" + regexp.QuoteMeta(p) + "$")
	}
	return re
}
