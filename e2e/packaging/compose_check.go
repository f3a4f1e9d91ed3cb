package packaging

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// The e2e service's contract (issue 10).
const (
	E2EService = "e2e"
	// LokiImage and VictoriaLogsImage are the image repositories the
	// LOKI_URL and VICTORIALOGS_URL services must run.
	LokiImage         = "grafana/loki"
	VictoriaLogsImage = "victoriametrics/victoria-logs"
)

// NativeE2E is the command CI runs natively; the container runs the same.
var NativeE2E = []string{"make", "e2e"}

var conditions = map[string]bool{"service_started": true, "service_healthy": true, "service_completed_successfully": true}

// CheckCompose returns every problem in r.Compose.
func CheckCompose(r *Repo) []error {
	cf, err := ParseCompose(r.Compose)
	if err != nil {
		return []error{err}
	}
	c := &composeChecker{r: r, cf: cf, targets: MakeTargets(r.Makefile)}
	for _, name := range sortedKeys(cf.Services) {
		c.service(name, cf.Services[name])
	}
	c.cycles()
	c.e2e()
	return c.errs
}

type composeChecker struct {
	r       *Repo
	cf      *ComposeFile
	targets map[string]string
	errs    []error
}

func (c *composeChecker) fail(svc, format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("%s: service %s: %s", ComposePath, svc, fmt.Sprintf(format, args...)))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// dockerfile parses the Dockerfile a build section names.
func (c *composeChecker) dockerfile(b *BuildSpec) (*Dockerfile, string, error) {
	name := b.Dockerfile
	if name == "" {
		name = "Dockerfile"
	}
	rel := path.Join(b.Context, name)
	text := c.r.Dockerfile
	if path.Clean(rel) != DockerfilePath {
		raw, err := os.ReadFile(filepath.Join(c.r.Root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, rel, err
		}
		text = string(raw)
	} else if !c.r.exists(rel) {
		return nil, rel, fmt.Errorf("%s does not exist", rel)
	}
	df, err := ParseDockerfile(text)
	return df, rel, err
}

func (c *composeChecker) service(name string, s *Service) {
	if s.Image == "" && s.Build == nil {
		c.fail(name, "neither image nor build")
	}
	if s.Build == nil {
		if _, tag, _ := strings.Cut(s.Image, ":"); tag == "" || tag == "latest" {
			c.fail(name, "image %q is not pinned to a version tag", s.Image)
		}
	} else {
		c.build(name, s)
	}
	for dep, cond := range s.DependsOn {
		target, ok := c.cf.Services[dep]
		switch {
		case !ok:
			c.fail(name, "depends_on %q: no such service", dep)
		case !conditions[cond]:
			c.fail(name, "depends_on %s: unknown condition %q", dep, cond)
		case cond == "service_healthy" && target.Healthcheck == nil:
			c.fail(name, "depends_on %s: service_healthy, but %s has no healthcheck", dep, dep)
		}
	}
	for _, v := range s.Volumes {
		c.volume(name, v)
	}
}

func (c *composeChecker) build(name string, s *Service) {
	b := s.Build
	if b.Context == "" {
		c.fail(name, "build without context")
		return
	}
	if st, err := os.Stat(filepath.Join(c.r.Root, filepath.FromSlash(b.Context))); err != nil || !st.IsDir() {
		c.fail(name, "build context %q is not a directory", b.Context)
		return
	}
	df, rel, err := c.dockerfile(b)
	if err != nil {
		c.fail(name, "dockerfile %s: %v", rel, err)
		return
	}
	stage := df.Stages[len(df.Stages)-1]
	if b.Target != "" {
		if stage = df.Stage(b.Target); stage == nil {
			c.fail(name, "build target %q is not a stage of %s", b.Target, rel)
			return
		}
	}
	// A build argument nobody declares is silently dropped by Docker.
	for arg := range b.Args {
		if !argDeclared(df, stage, arg) {
			c.fail(name, "build arg %s is not an ARG of stage %q or its ancestors in %s", arg, stageName(stage), rel)
		}
	}
	if s.WorkingDir != "" && s.WorkingDir != df.Workdir(stage) {
		c.fail(name, "working_dir %s is not the image's tree (%s)", s.WorkingDir, df.Workdir(stage))
	}
	for _, argv := range []Argv{s.Entrypoint, s.Command} {
		if len(argv) == 0 {
			continue
		}
		if argv[0] == "make" {
			for _, t := range argv[1:] {
				if _, ok := c.targets[t]; !ok && !strings.HasPrefix(t, "-") && !strings.Contains(t, "=") {
					c.fail(name, "command `%s`: the Makefile has no target %q", strings.Join(argv, " "), t)
				}
			}
		} else if strings.Contains(argv[0], "/") && !path.IsAbs(argv[0]) {
			// Relative to the image's working directory, which holds a copy
			// of the tree (COPY . .), so it must be in the tree.
			c.script(name, argv[0])
		}
	}
}

func argDeclared(df *Dockerfile, st *Stage, arg string) bool {
	for _, in := range df.GlobalArgs {
		if hasKey(in, arg) {
			return true
		}
	}
	for _, s := range df.Chain(st) {
		for _, in := range s.Find("ARG") {
			if hasKey(in, arg) {
				return true
			}
		}
	}
	return false
}

func (c *composeChecker) script(name, rel string) {
	st, err := os.Stat(filepath.Join(c.r.Root, filepath.FromSlash(rel)))
	switch {
	case err != nil:
		c.fail(name, "command %s: no such file in the tree", rel)
	case st.Mode()&0o111 == 0:
		c.fail(name, "command %s: not executable", rel)
	default:
		if ex, by := ParseDockerIgnore(c.r.DockerIgnore).Excluded(rel); ex {
			c.fail(name, "command %s: excluded from the image by .dockerignore pattern %q", rel, by)
		}
	}
}

// volume checks a short-syntax volume: a relative bind source must exist
// (relative to the compose file, i.e. the root), a named one be declared.
func (c *composeChecker) volume(name, v string) {
	parts := strings.Split(v, ":")
	if len(parts) < 2 || len(parts) > 3 || !path.IsAbs(parts[1]) {
		c.fail(name, "volume %q: want source:/absolute/target[:mode]", v)
		return
	}
	src := parts[0]
	switch {
	case strings.HasPrefix(src, "."):
		if _, err := os.Stat(filepath.Join(c.r.Root, filepath.FromSlash(src))); err != nil {
			c.fail(name, "volume %q: %s does not exist beside the tree", v, src)
		}
	case path.IsAbs(src):
		c.fail(name, "volume %q: an absolute host path ties the file to one machine", v)
	default:
		if _, ok := c.cf.Volumes[src]; !ok {
			c.fail(name, "volume %q: named volume %s is not declared under volumes:", v, src)
		}
	}
}

// cycles rejects depends_on loops (compose refuses to start them).
func (c *composeChecker) cycles() {
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(string, []string)
	visit = func(n string, trail []string) {
		switch state[n] {
		case 1:
			c.fail(n, "depends_on cycle: %s", strings.Join(append(trail, n), " → "))
			return
		case 2:
			return
		}
		state[n] = 1
		if s, ok := c.cf.Services[n]; ok {
			for _, d := range sortedKeys(s.DependsOn) {
				visit(d, append(trail, n))
			}
		}
		state[n] = 2
	}
	for _, n := range sortedKeys(c.cf.Services) {
		visit(n, nil)
	}
}

// e2e checks the e2e service's contract.
func (c *composeChecker) e2e() {
	s, ok := c.cf.Services[E2EService]
	if !ok {
		c.errs = append(c.errs, fmt.Errorf("%s: no %q service", ComposePath, E2EService))
		return
	}
	if !slices.Equal(s.Command, NativeE2E) || len(s.Entrypoint) > 0 {
		c.fail(E2EService, "runs %q (entrypoint %q), not the native %q: the container must prove what CI proves",
			strings.Join(s.Command, " "), strings.Join(s.Entrypoint, " "), strings.Join(NativeE2E, " "))
	}
	if s.Build == nil {
		c.fail(E2EService, "is not built from this tree")
		return
	}
	for env, image := range map[string]string{"LOKI_URL": LokiImage, "VICTORIALOGS_URL": VictoriaLogsImage} {
		c.upstream(s, env, image)
	}
	c.sameLokiAsDeploy(s)
	c.sameVictoriaLogsAsScript(s)
	// The schema loader walks up from the tree to <parent>/shared/schemas.
	df, _, err := c.dockerfile(s.Build)
	if err != nil {
		return // reported by build()
	}
	stage := df.Stage(s.Build.Target)
	if stage == nil {
		stage = df.Stages[len(df.Stages)-1]
	}
	want := path.Join(path.Dir(df.Workdir(stage)), "shared")
	found := false
	for _, v := range s.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) >= 2 && parts[1] == want {
			found = true
			if _, err := os.Stat(filepath.Join(c.r.Root, filepath.FromSlash(parts[0]), "schemas")); err != nil {
				c.fail(E2EService, "volume %q: %s has no schemas/", v, parts[0])
			}
		}
	}
	if !found {
		c.fail(E2EService, "no volume mounts shared/ at %s, beside the tree, where the schema loader looks", want)
	}
}

// upstream checks that env names a URL whose host is a service of this
// file running image, and that e2e waits for that service (directly or
// through another service).
func (c *composeChecker) upstream(s *Service, env, image string) {
	raw, ok := s.Environment[env]
	if !ok {
		c.fail(E2EService, "%s is not set", env)
		return
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		c.fail(E2EService, "%s=%q is not a URL", env, raw)
		return
	}
	host := u.Hostname()
	target, ok := c.cf.Services[host]
	if !ok {
		c.fail(E2EService, "%s points at %q, which is not a service of this file", env, host)
		return
	}
	if repo, _, _ := strings.Cut(target.Image, ":"); repo != image {
		c.fail(E2EService, "%s points at service %s running %q, want %s", env, host, target.Image, image)
	}
	if !c.reaches(E2EService, host, map[string]bool{}) {
		c.fail(E2EService, "does not depend on %s (directly or through another service), so it may start first", host)
	}
}

// DeployLokiCompose is the Loki operators run (issue 8); the e2e run must
// test that same image.
const DeployLokiCompose = "deploy/loki/docker-compose.yml"

func (c *composeChecker) sameLokiAsDeploy(s *Service) {
	raw, err := os.ReadFile(filepath.Join(c.r.Root, filepath.FromSlash(DeployLokiCompose)))
	if err != nil {
		return // no operator deployment to stay in step with
	}
	var deploy struct {
		Services map[string]struct {
			Image string `yaml:"image"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &deploy); err != nil {
		c.fail(E2EService, "%s: %v", DeployLokiCompose, err)
		return
	}
	u, err := url.Parse(s.Environment["LOKI_URL"])
	if err != nil {
		return // reported by upstream()
	}
	ours, ok := c.cf.Services[u.Hostname()]
	if !ok {
		return // reported by upstream()
	}
	for name, d := range deploy.Services {
		if repo, _, _ := strings.Cut(d.Image, ":"); repo == LokiImage && d.Image != ours.Image {
			c.fail(u.Hostname(), "runs %s, but %s (service %s) deploys %s: the e2e run must test what operators run", ours.Image, DeployLokiCompose, name, d.Image)
		}
	}
}

// VictoriaLogsScript starts VictoriaLogs for the native run; the container
// run must use the same version and the same -loki.* flags, or the suite
// would see different stored entries in the two places.
const VictoriaLogsScript = "scripts/victorialogs.sh"

var (
	scriptVersion = regexp.MustCompile(`(?m)^VERSION=(\S+)$`)
	scriptLokiArg = regexp.MustCompile(`-loki\.[A-Za-z.]+`)
)

func (c *composeChecker) sameVictoriaLogsAsScript(s *Service) {
	raw, err := os.ReadFile(filepath.Join(c.r.Root, filepath.FromSlash(VictoriaLogsScript)))
	if err != nil {
		return // no native VictoriaLogs to stay in step with
	}
	u, err := url.Parse(s.Environment["VICTORIALOGS_URL"])
	if err != nil {
		return // reported by upstream()
	}
	ours, ok := c.cf.Services[u.Hostname()]
	if !ok {
		return // reported by upstream()
	}
	if m := scriptVersion.FindSubmatch(raw); m == nil {
		c.fail(u.Hostname(), "%s has no VERSION= line to compare the image with", VictoriaLogsScript)
	} else if _, tag, _ := strings.Cut(ours.Image, ":"); tag != string(m[1]) {
		c.fail(u.Hostname(), "runs %s, but %s builds %s", ours.Image, VictoriaLogsScript, m[1])
	}
	for _, flag := range scriptLokiArg.FindAllString(string(raw), -1) {
		found := false
		for _, arg := range ours.Command {
			if arg == flag || strings.HasPrefix(arg, flag+"=") {
				found = true
			}
		}
		if !found {
			c.fail(u.Hostname(), "command lacks %s, which %s passes", flag, VictoriaLogsScript)
		}
	}
}

func (c *composeChecker) reaches(from, to string, seen map[string]bool) bool {
	if seen[from] {
		return false
	}
	seen[from] = true
	s, ok := c.cf.Services[from]
	if !ok {
		return false
	}
	for d := range s.DependsOn {
		if d == to || c.reaches(d, to, seen) {
			return true
		}
	}
	return false
}
