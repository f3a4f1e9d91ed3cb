package packaging

import (
	"slices"
	"strings"
	"testing"
)

func TestMakefileOfTheTree(t *testing.T) {
	r := loadRepo(t)
	wantClean(t, CheckMakefile(r))
}

func TestMakeTargets(t *testing.T) {
	mk := strings.Join([]string{
		"VERSION ?= $(shell git describe)",
		"LDFLAGS := -X a.b=$(VERSION)",
		"E2E_PKGS = $(shell go list ./e2e/...)",
		".PHONY: build dist",
		"build: $(PLUGINS)",
		"$(BIN)/animus-%: FORCE",
		"\tgo build -o $@ ./plugins/$*",
		"# dist: a comment, not a rule",
		"dist install: build",
		"\tgo run ./tools/cmd/animus-dist \\",
		"\t\t-out dist",
		"",
		"docker-e2e:",
		"\tdocker compose up",
	}, "\n")
	got := MakeTargets(mk)
	var names []string
	for k := range got {
		names = append(names, k)
	}
	slices.Sort(names)
	if want := []string{"build", "dist", "docker-e2e", "install"}; !slices.Equal(names, want) {
		t.Fatalf("targets %v, want %v", names, want)
	}
	if got["dist"] != "go run ./tools/cmd/animus-dist  -out dist\n" {
		t.Errorf("dist recipe %q: continuation lines not joined", got["dist"])
	}
	if got["install"] != got["dist"] {
		t.Errorf("a rule with two targets gives both the recipe: %q vs %q", got["install"], got["dist"])
	}
	if got["build"] != "" {
		t.Errorf("build has no recipe of its own, got %q", got["build"])
	}
}

func TestMakefileDefects(t *testing.T) {
	cases := []struct {
		name string
		seed func(t *testing.T, r *Repo)
		want string
	}{
		{"no dist target", func(t *testing.T, r *Repo) {
			replace(t, &r.Makefile, "\ndist:", "\nrelease:")
		}, `no "dist" target`},
		{"docker-e2e runs another compose command", func(t *testing.T, r *Repo) {
			replace(t, &r.Makefile, "--exit-code-from e2e", "--exit-code-from tests")
		}, `target docker-e2e does not run "docker compose -f docker-compose.e2e.yml up --build --abort-on-container-exit --exit-code-from e2e"`},
		{"install bypasses the script", func(t *testing.T, r *Repo) {
			replace(t, &r.Makefile, "scripts/install.sh", "cp $(BIN)/* $(PREFIX)/bin/ #")
		}, `target install does not run "scripts/install.sh"`},
		{"the dist generator is gone", func(t *testing.T, r *Repo) {
			r.Root = t.TempDir() // a tree without tools/cmd/animus-dist
		}, "runs ./tools/cmd/animus-dist, which does not exist"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := clone(loadRepo(t))
			tc.seed(t, r)
			wantError(t, CheckMakefile(r), tc.want)
		})
	}
}
