package packaging

import (
	"os"
	"path/filepath"
	"strings"
)

// DockerE2ECommand is what `make docker-e2e` runs: compose builds the
// images, runs the e2e service to its end, stops the rest and exits with
// the e2e container's status.
const DockerE2ECommand = "docker compose -f " + ComposePath + " up --build --abort-on-container-exit --exit-code-from " + E2EService

// Packaging targets and a tool each recipe must call.
var packagingTargets = []struct{ target, tool string }{
	{"dist", "./tools/cmd/animus-dist"},
	{"install", "scripts/install.sh"},
	{"docker-e2e", DockerE2ECommand},
	{"e2e", "go test"},
	{"build", ""},
}

// CheckMakefile checks that the packaging targets exist and call the tools
// this package checks, and that those tools exist.
func CheckMakefile(r *Repo) []error {
	targets := MakeTargets(r.Makefile)
	var errs []error
	for _, pt := range packagingTargets {
		recipe, ok := targets[pt.target]
		if !ok {
			errs = append(errs, problem(MakefilePath, 0, "no %q target", pt.target))
			continue
		}
		if pt.tool != "" && !strings.Contains(recipe, pt.tool) {
			errs = append(errs, problem(MakefilePath, 0, "target %s does not run %q; its recipe:\n%s", pt.target, pt.tool, recipe))
		}
		if strings.HasPrefix(pt.tool, "./") || strings.HasPrefix(pt.tool, "scripts/") {
			if _, err := os.Stat(filepath.Join(r.Root, filepath.FromSlash(pt.tool))); err != nil {
				errs = append(errs, problem(MakefilePath, 0, "target %s runs %s, which does not exist", pt.target, pt.tool))
			}
		}
	}
	return errs
}
