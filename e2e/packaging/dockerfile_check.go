package packaging

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Runtime image contract (issue 10).
const (
	RuntimeUser   = "animus"
	RuntimeBinDir = "/usr/local/bin"
)

// requiredLabels must be set on the runtime image; the version one must
// come from the VERSION build argument (git describe on the host).
var requiredLabels = []string{
	"org.opencontainers.image.title",
	"org.opencontainers.image.version",
	"org.opencontainers.image.licenses",
	"org.opencontainers.image.source",
}

// CheckDockerfile returns every problem found in r.Dockerfile; none means
// well-formed, consistent with the tree, and meeting the image contract.
func CheckDockerfile(r *Repo) []error {
	df, err := ParseDockerfile(r.Dockerfile)
	if err != nil {
		return []error{err}
	}
	c := &dfChecker{r: r, df: df, ignore: ParseDockerIgnore(r.DockerIgnore), targets: MakeTargets(r.Makefile)}
	c.stages()
	for _, st := range df.Stages {
		for _, in := range st.Instructions {
			c.instruction(st, in)
		}
	}
	c.runtime(df.Stages[len(df.Stages)-1])
	return c.errs
}

type dfChecker struct {
	r       *Repo
	df      *Dockerfile
	ignore  *DockerIgnore
	targets map[string]string
	errs    []error
}

func (c *dfChecker) fail(line int, format string, args ...any) {
	c.errs = append(c.errs, problem(DockerfilePath, line, format, args...))
}

// stages checks names, FROM references and the variables FROM uses (only
// ARGs declared before the first FROM are visible there).
func (c *dfChecker) stages() {
	global := map[string]bool{}
	for _, a := range c.df.GlobalArgs {
		for k := range a.KeyValues() {
			global[k] = true
		}
	}
	seen := map[string]bool{}
	for _, st := range c.df.Stages {
		if st.Name != "" {
			if seen[st.Name] {
				c.fail(st.Line, "stage name %q used twice", st.Name)
			}
			seen[st.Name] = true
		}
		for _, v := range VarRefs(st.Base) {
			if !global[v] {
				c.fail(st.Line, "FROM uses $%s, which is not an ARG before the first FROM", v)
			}
		}
		if ref := c.df.Stage(st.Base); ref != nil && ref.Index >= st.Index {
			c.fail(st.Line, "FROM %s names this or a later stage", st.Base)
		}
	}
}

// declared reports whether a variable is visible at instruction index i of
// st: an ARG earlier in the stage, or an ENV in it or an ancestor stage.
func (c *dfChecker) declared(st *Stage, line int, name string) bool {
	for _, in := range st.Instructions {
		if in.Line >= line {
			break
		}
		if (in.Cmd == "ARG" || in.Cmd == "ENV") && hasKey(in, name) {
			return true
		}
	}
	for _, anc := range c.df.Chain(st)[1:] {
		for _, in := range anc.Find("ENV") {
			if hasKey(in, name) {
				return true
			}
		}
	}
	return false
}

func hasKey(in Instruction, name string) bool {
	_, ok := in.KeyValues()[name]
	return ok
}

func (c *dfChecker) instruction(st *Stage, in Instruction) {
	switch in.Cmd {
	case "COPY", "ADD", "LABEL", "WORKDIR", "USER", "ENV", "ARG":
		for _, v := range VarRefs(in.Raw) {
			if !c.declared(st, in.Line, v) {
				c.fail(in.Line, "%s uses $%s, which is not declared (ARG) in stage %q before it", in.Cmd, v, stageName(st))
			}
		}
	}
	switch in.Cmd {
	case "COPY", "ADD":
		c.copy(st, in)
	case "RUN":
		c.makeTargets(in, strings.Join(in.Args, " "))
	case "CMD", "ENTRYPOINT":
		if len(in.Args) > 0 && in.Args[0] == "make" {
			c.makeTargets(in, strings.Join(in.Args, " "))
		}
	case "ENV":
		if v, ok := in.KeyValues()["CGO_ENABLED"]; ok && v != "1" {
			c.fail(in.Line, "CGO_ENABLED=%s: the SQLite plugins need cgo", v)
		}
	}
}

func stageName(st *Stage) string {
	if st.Name != "" {
		return st.Name
	}
	return fmt.Sprint(st.Index)
}

// makeTargets checks every `make [VAR=x] target...` in a command line.
func (c *dfChecker) makeTargets(in Instruction, cmdline string) {
	for _, part := range strings.FieldsFunc(cmdline, func(r rune) bool { return r == ';' || r == '&' || r == '|' }) {
		words := strings.Fields(part)
		if len(words) == 0 || words[0] != "make" {
			continue
		}
		for _, w := range words[1:] {
			if strings.HasPrefix(w, "-") || strings.Contains(w, "=") {
				continue
			}
			if _, ok := c.targets[w]; !ok {
				c.fail(in.Line, "`make %s`: the Makefile has no target %q", w, w)
			}
		}
	}
}

// copy checks a COPY/ADD: context sources exist and are not dockerignored;
// --from names an earlier stage, and a binary taken from a build stage's
// bin/ is one that stage's `make build` produces.
func (c *dfChecker) copy(st *Stage, in Instruction) {
	if len(in.Args) < 2 {
		c.fail(in.Line, "%s needs a source and a destination", in.Cmd)
		return
	}
	srcs := in.Args[:len(in.Args)-1]
	from, hasFrom := in.Flags["from"]
	if !hasFrom {
		for _, s := range srcs {
			c.contextSource(in, s)
		}
		return
	}
	src := c.df.Stage(from)
	if src == nil || src.Index >= st.Index {
		c.fail(in.Line, "COPY --from=%s: no earlier stage of that name", from)
		return
	}
	bin := path.Join(c.df.Workdir(src), "bin") + "/"
	built := c.r.BuiltBinaries()
	for _, s := range srcs {
		name, ok := strings.CutPrefix(s, bin)
		if !ok || strings.Contains(name, "/") {
			c.fail(in.Line, "COPY --from=%s %s: only %s<binary> (what `make build` writes) can be checked", from, s, bin)
			continue
		}
		if !built[name] {
			c.fail(in.Line, "COPY --from=%s %s: `make build` builds no %s (no plugins/%s/main.go)", from, s, name, strings.TrimPrefix(name, "animus-"))
		}
		if !c.runsMakeBuild(src) {
			c.fail(in.Line, "COPY --from=%s: that stage never runs `make build`", from)
		}
	}
}

func (c *dfChecker) runsMakeBuild(st *Stage) bool {
	for _, s := range c.df.Chain(st) {
		for _, in := range s.Find("RUN") {
			words := strings.Fields(strings.Join(in.Args, " "))
			if i := slices.Index(words, "make"); i >= 0 && slices.Contains(words[i+1:], "build") {
				return true
			}
		}
	}
	return false
}

func (c *dfChecker) contextSource(in Instruction, s string) {
	if strings.Contains(s, "://") {
		c.fail(in.Line, "%s %s: remote sources are not reproducible", in.Cmd, s)
		return
	}
	rel := strings.TrimPrefix(path.Clean("/"+s), "/")
	matches := []string{rel}
	if strings.ContainsAny(rel, "*?[") {
		abs, _ := filepath.Glob(filepath.Join(c.r.Root, filepath.FromSlash(rel)))
		matches = matches[:0]
		for _, a := range abs {
			m, _ := filepath.Rel(c.r.Root, a)
			matches = append(matches, filepath.ToSlash(m))
		}
	}
	if rel == "." {
		return // the whole context
	}
	if len(matches) == 0 {
		c.fail(in.Line, "%s %s: matches nothing in the build context", in.Cmd, s)
	}
	for _, m := range matches {
		if !c.r.exists(m) {
			c.fail(in.Line, "%s %s: no such file in the build context", in.Cmd, m)
		} else if ex, by := c.ignore.Excluded(m); ex {
			c.fail(in.Line, "%s %s: excluded from the build context by .dockerignore pattern %q", in.Cmd, m, by)
		}
	}
}

// runtime checks the last stage: the image users get.
func (c *dfChecker) runtime(st *Stage) {
	if p := c.df.Parent(st); p != nil {
		c.fail(st.Line, "the runtime stage builds FROM stage %q and would ship its toolchain and sources", p.Name)
	}
	users := st.Find("USER")
	switch {
	case len(users) == 0:
		c.fail(st.Line, "runtime stage has no USER: the image would run as root")
	default:
		u := users[len(users)-1]
		name, _, _ := strings.Cut(u.Args[0], ":")
		if name != RuntimeUser {
			c.fail(u.Line, "runtime USER is %q, want the non-root %q", u.Args[0], RuntimeUser)
		}
		if !c.createsUser(st, name) {
			c.fail(u.Line, "runtime stage never creates user %q (useradd/adduser)", name)
		}
	}
	for _, h := range st.Find("HEALTHCHECK") {
		if !strings.EqualFold(h.Args[0], "NONE") {
			c.fail(h.Line, "HEALTHCHECK in the runtime image: plugins are spawned by the daemon, there is no server to probe")
		}
	}
	c.entrypoint(st)
	c.labels(st)
	c.pluginCopies(st)
}

func (c *dfChecker) createsUser(st *Stage, name string) bool {
	for _, in := range st.Find("RUN") {
		// The login name is the last word of a useradd/adduser command
		// (--gid animus or --home-dir /home/animus do not create one).
		cmds := strings.FieldsFunc(strings.Join(in.Args, " "), func(r rune) bool { return r == ';' || r == '&' || r == '|' })
		for _, cmd := range cmds {
			words := strings.Fields(cmd)
			if len(words) > 1 && (words[0] == "useradd" || words[0] == "adduser") && words[len(words)-1] == name {
				return true
			}
		}
	}
	return false
}

// copiedTo returns the in-image paths the stage's COPY instructions create
// (a destination ending in / or naming a directory gets the source names).
func copiedTo(st *Stage) map[string]string {
	out := map[string]string{} // in-image path → source
	for _, in := range append(st.Find("COPY"), st.Find("ADD")...) {
		if len(in.Args) < 2 {
			continue
		}
		srcs, dst := in.Args[:len(in.Args)-1], in.Args[len(in.Args)-1]
		for _, s := range srcs {
			if strings.HasSuffix(dst, "/") || len(srcs) > 1 {
				out[path.Join(dst, path.Base(s))] = s
			} else {
				out[dst] = s
			}
		}
	}
	return out
}

func (c *dfChecker) entrypoint(st *Stage) {
	eps := st.Find("ENTRYPOINT")
	if len(eps) == 0 {
		c.fail(st.Line, "runtime stage has no ENTRYPOINT")
		return
	}
	ep := eps[len(eps)-1]
	if !ep.Exec || len(ep.Args) == 0 {
		c.fail(ep.Line, "ENTRYPOINT must be exec form (a JSON array), so signals reach the process and arguments pass through")
		return
	}
	if _, ok := copiedTo(st)[ep.Args[0]]; !ok {
		c.fail(ep.Line, "ENTRYPOINT %s is not a file this stage copies into the image", ep.Args[0])
	}
}

func (c *dfChecker) labels(st *Stage) {
	labels := map[string]string{}
	for _, in := range st.Find("LABEL") {
		for k, v := range in.KeyValues() {
			labels[k] = v
		}
	}
	for _, k := range requiredLabels {
		if labels[k] == "" {
			c.fail(st.Line, "runtime image lacks label %s", k)
		}
	}
	if v, ok := labels["org.opencontainers.image.version"]; ok && !slices.Contains(VarRefs(v), "VERSION") {
		c.fail(st.Line, "label org.opencontainers.image.version = %q does not come from the VERSION build argument", v)
	}
}

// pluginCopies checks that every plugins/<dir>/main.go has its binary in
// RuntimeBinDir under its own name.
func (c *dfChecker) pluginCopies(st *Stage) {
	copied := copiedTo(st)
	for _, p := range c.r.Plugins {
		name := "animus-" + p
		src, ok := copied[path.Join(RuntimeBinDir, name)]
		if !ok || path.Base(src) != name {
			c.fail(st.Line, "plugins/%s/main.go exists but the runtime image has no %s/%s copied from the build stage", p, RuntimeBinDir, name)
		}
	}
}
