package packaging

import (
	"slices"
	"strings"
	"testing"
)

func TestDockerfileOfTheTree(t *testing.T) {
	r := loadRepo(t)
	wantClean(t, CheckDockerfile(r))

	// The checker saw what the file holds, not an empty parse.
	df, err := ParseDockerfile(r.Dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range df.Stages {
		names = append(names, st.Name)
	}
	if !slices.Equal(names, []string{"build", "e2e", "runtime"}) {
		t.Errorf("stages %v, want build, e2e, runtime (runtime last: the default target)", names)
	}
	runtime := df.Stages[len(df.Stages)-1]
	copied := copiedTo(runtime)
	for _, p := range r.Plugins {
		if _, ok := copied[RuntimeBinDir+"/animus-"+p]; !ok {
			t.Errorf("runtime image lacks animus-%s", p)
		}
	}
}

// TestDockerfileDefects seeds one defect per case into the real Dockerfile
// (or the tree around it) and expects the checker to name it.
func TestDockerfileDefects(t *testing.T) {
	const copyQueue = "COPY --from=build /src/main/bin/animus-queue-sqlite /usr/local/bin/animus-queue-sqlite\n"
	cases := []struct {
		name string
		seed func(t *testing.T, r *Repo)
		want string
	}{
		{"a plugin's binary is not copied", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, copyQueue, "")
		}, "no /usr/local/bin/animus-queue-sqlite"},
		{"a new plugin directory without a COPY line", func(t *testing.T, r *Repo) {
			r.Plugins = append(r.Plugins, "logs-elastic")
		}, "plugins/logs-elastic/main.go exists"},
		{"runtime user is root", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, "USER animus", "USER root")
		}, `want the non-root "animus"`},
		{"no USER at all", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, "USER animus\n", "")
		}, "would run as root"},
		{"user switched to but never created", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, "--shell /usr/sbin/nologin animus", "--shell /usr/sbin/nologin plugins")
		}, "never creates user"},
		{"COPY --from an unknown stage", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, "COPY --from=build /src/main/bin/animus-queue-sqlite", "COPY --from=builder /src/main/bin/animus-queue-sqlite")
		}, "COPY --from=builder: no earlier stage"},
		{"COPY of a binary make build does not build", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, copyQueue, strings.ReplaceAll(copyQueue, "queue-sqlite", "queue-redis"))
		}, "builds no animus-queue-redis"},
		{"COPY from outside the build stage's bin/", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, "/src/main/bin/animus-queue-sqlite /usr", "/src/main/out/animus-queue-sqlite /usr")
		}, "only /src/main/bin/<binary>"},
		{"the build stage's WORKDIR moved", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, "WORKDIR /src/main\n", "WORKDIR /src\n")
		}, "only /src/bin/<binary>"},
		{"a healthcheck", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, "USER animus\n", "USER animus\nHEALTHCHECK CMD animus-queue-sqlite --manifest\n")
		}, "HEALTHCHECK in the runtime image"},
		{"RUN a make target that does not exist", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, `RUN make build VERSION="${VERSION}"`, `RUN make bulid VERSION="${VERSION}"`)
		}, `no target "bulid"`},
		{"CMD a make target that does not exist", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, `CMD ["make", "e2e"]`, `CMD ["make", "e2e-docker"]`)
		}, `no target "e2e-docker"`},
		{"the Makefile lost the target the image runs", func(t *testing.T, r *Repo) {
			replace(t, &r.Makefile, "\nbuild:", "\nbuild-all:")
		}, `no target "build"`},
		{"shell-form entrypoint", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, `ENTRYPOINT ["/usr/local/bin/animus-plugins-info"]`, `ENTRYPOINT /usr/local/bin/animus-plugins-info`)
		}, "must be exec form"},
		{"entrypoint not in the image", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, `ENTRYPOINT ["/usr/local/bin/animus-plugins-info"]`, `ENTRYPOINT ["/usr/local/bin/animus-daemon"]`)
		}, "not a file this stage copies"},
		{"malformed exec form", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, `CMD ["make", "e2e"]`, `CMD ["make", "e2e"`)
		}, "not a JSON string array"},
		{"version label not from the build argument", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, `org.opencontainers.image.version="${VERSION}"`, `org.opencontainers.image.version="1.0.0"`)
		}, "does not come from the VERSION build argument"},
		{"a required label missing", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, `org.opencontainers.image.licenses="Apache-2.0"`, `org.opencontainers.image.license="Apache-2.0"`)
		}, "lacks label org.opencontainers.image.licenses"},
		{"label uses an ARG the stage does not declare", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, "ARG REVISION=unknown\n", "")
		}, "uses $REVISION, which is not declared"},
		{"FROM uses an undeclared ARG", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, "ARG GO_VERSION=1.26\n", "")
		}, "FROM uses $GO_VERSION"},
		{"COPY of a file missing from the context", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, "scripts/docker-entrypoint.sh", "scripts/entrypoint.sh")
		}, "scripts/entrypoint.sh: no such file"},
		{"COPY of a file .dockerignore leaves out", func(t *testing.T, r *Repo) {
			r.DockerIgnore += "\nscripts/\n"
		}, `excluded from the build context by .dockerignore pattern "scripts/"`},
		{"cgo disabled", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, "ENV CGO_ENABLED=1", "ENV CGO_ENABLED=0")
		}, "CGO_ENABLED=0"},
		{"unknown instruction", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, "COPY . .", "COPPY . .")
		}, `unknown instruction "COPPY"`},
		{"a stage name used twice", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, "FROM build AS e2e", "FROM build AS build")
		}, `stage name "build" used twice`},
		{"runtime built on the toolchain stage", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, "FROM debian:${DEBIAN_RELEASE}-slim AS runtime", "FROM build AS runtime")
		}, "would ship its toolchain"},
		{"FROM a later stage", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, "FROM build AS e2e", "FROM runtime AS e2e")
		}, "names this or a later stage"},
		{"instruction before FROM", func(t *testing.T, r *Repo) {
			r.Dockerfile = "RUN true\n" + r.Dockerfile
		}, "before the first FROM"},
		{"dangling line continuation", func(t *testing.T, r *Repo) {
			r.Dockerfile = strings.TrimRight(r.Dockerfile, "\n") + " \\\n"
		}, "line continuation at end of file"},
		{"unterminated quote", func(t *testing.T, r *Repo) {
			replace(t, &r.Dockerfile, `org.opencontainers.image.title="animus-plugins"`, `org.opencontainers.image.title="animus-plugins`)
		}, "unterminated"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := clone(loadRepo(t))
			tc.seed(t, r)
			wantError(t, CheckDockerfile(r), tc.want)
		})
	}
}

func TestDockerIgnore(t *testing.T) {
	di := ParseDockerIgnore("# comment\n.git\nbin/\n**/*.test\n/dist\ndocs/*.md\n!docs/keep.md\n")
	cases := []struct {
		path string
		want bool
	}{
		{".git", true},
		{".git/config", true},
		{"bin/animus-queue-sqlite", true},
		{"plugins/x/bin/file", false}, // "bin/" is anchored at the root
		{"e2e/packaging/packaging.test", true},
		{"top.test", true},
		{"dist/SHA256SUMS", true},
		{"docs/a.md", true},
		{"docs/keep.md", false},
		{"docs/sub/a.md", false},
		{"Dockerfile", false},
		{"scripts/install.sh", false},
		{".gitignore", false},
	}
	for _, tc := range cases {
		if got, by := di.Excluded(tc.path); got != tc.want {
			t.Errorf("Excluded(%q) = %v (by %q), want %v", tc.path, got, by, tc.want)
		}
	}
}

func TestSplitWords(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{`a b  c`, []string{"a", "b", "c"}},
		{`k="x y" j='$v' z=\"q`, []string{"k=x y", "j=$v", `z="q`}},
		{`""`, []string{""}},
	}
	for _, tc := range cases {
		got, err := splitWords(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("splitWords(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
