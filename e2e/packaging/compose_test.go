package packaging

import (
	"slices"
	"strings"
	"testing"
)

func TestComposeOfTheTree(t *testing.T) {
	r := loadRepo(t)
	wantClean(t, CheckCompose(r))

	cf, err := ParseCompose(r.Compose)
	if err != nil {
		t.Fatal(err)
	}
	e2e := cf.Services[E2EService]
	if e2e == nil || !slices.Equal(e2e.Command, NativeE2E) {
		t.Fatalf("e2e service command = %v, want %v", e2e, NativeE2E)
	}
	// The native command is what CI runs: the Makefile target must exist
	// and be the one .ci/run reaches through `make test`.
	targets := MakeTargets(r.Makefile)
	if _, ok := targets["e2e"]; !ok {
		t.Fatal("Makefile has no e2e target")
	}
	if !slices.Contains(splitPrereqs(r.Makefile, "test"), "e2e") {
		t.Error("`make test` (what CI runs) does not include e2e, so CI would not prove what Docker runs")
	}
	// The anchor-shared build sections decoded to the same thing.
	ready := cf.Services["ready"]
	if ready == nil || ready.Build == nil || ready.Build.Target != e2e.Build.Target ||
		ready.Build.Args["VERSION"] != e2e.Build.Args["VERSION"] || ready.Image != e2e.Image {
		t.Errorf("ready and e2e should build the same image: %+v vs %+v", ready, e2e)
	}
}

// splitPrereqs returns the prerequisites of a Makefile target.
func splitPrereqs(makefile, target string) []string {
	for _, line := range strings.Split(makefile, "\n") {
		if rest, ok := strings.CutPrefix(line, target+":"); ok {
			return strings.Fields(rest)
		}
	}
	return nil
}

func TestComposeDefects(t *testing.T) {
	cases := []struct {
		name string
		seed func(t *testing.T, r *Repo)
		want string
	}{
		{"e2e runs another command than native make e2e", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, `command: ["make", "e2e"]`, `command: ["make", "e2e-loki"]`)
		}, `not the native "make e2e"`},
		{"e2e wraps the command in a shell", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, `command: ["make", "e2e"]`, `command: ["sh", "-c", "sleep 5 && make e2e"]`)
		}, `not the native "make e2e"`},
		{"e2e overrides the entrypoint", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, `command: ["make", "e2e"]`, "command: [\"make\", \"e2e\"]\n    entrypoint: [\"timeout\", \"60\"]")
		}, `entrypoint "timeout 60"`},
		{"LOKI_URL points at no service", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "LOKI_URL: http://loki:3100", "LOKI_URL: http://grafana-loki:3100")
		}, `points at "grafana-loki", which is not a service`},
		{"LOKI_URL missing", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "      LOKI_URL: http://loki:3100\n", "")
		}, "LOKI_URL is not set"},
		{"the Loki service runs something else", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "image: grafana/loki:", "image: grafana/grafana:")
		}, "want grafana/loki"},
		{"VICTORIALOGS_URL at the wrong service", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "VICTORIALOGS_URL: http://victorialogs:9428", "VICTORIALOGS_URL: http://loki:9428")
		}, "want victoriametrics/victoria-logs"},
		{"an unpinned image", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "image: grafana/loki:3.5.3", "image: grafana/loki")
		}, "not pinned"},
		{"a Loki other than the one operators deploy", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "image: grafana/loki:3.5.3", "image: grafana/loki:3.4.0")
		}, "deploy/loki/docker-compose.yml (service loki) deploys grafana/loki:3.5.3"},
		{"the Loki config mount is missing", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "./deploy/loki/loki-config.yaml:", "./deploy/loki/config.yaml:")
		}, "./deploy/loki/config.yaml does not exist"},
		{"VictoriaLogs without the native run's flags", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, `"-loki.disableMessageParsing", `, "")
		}, "command lacks -loki.disableMessageParsing"},
		{"a VictoriaLogs other than the native run's", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "victoria-logs:v1.52.1", "victoria-logs:v1.50.0")
		}, "but scripts/victorialogs.sh builds v1.52.1"},
		{"build target that is not a stage", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "target: e2e", "target: test")
		}, `build target "test" is not a stage`},
		{"dockerfile that does not exist", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "dockerfile: Dockerfile", "dockerfile: Dockerfile.e2e")
		}, "dockerfile Dockerfile.e2e"},
		{"build context that does not exist", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "context: .\n", "context: ./docker\n")
		}, `build context "./docker" is not a directory`},
		{"a build arg the Dockerfile does not declare", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "VERSION: ${VERSION:-0.0.0-dev}\n    command: [\"scripts", "VERSION: ${VERSION:-0.0.0-dev}\n        GIT_SHA: x\n    command: [\"scripts")
		}, "build arg GIT_SHA is not an ARG"},
		{"depends_on an unknown service", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "      ready:\n        condition", "      readiness:\n        condition")
		}, `depends_on "readiness": no such service`},
		{"a misspelt key", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "    depends_on:\n      ready:", "    depend_on:\n      ready:")
		}, "field depend_on not found"},
		{"an unknown top-level key", func(t *testing.T, r *Repo) {
			r.Compose += "\nservice:\n  x: {}\n"
		}, `unknown top-level key "service"`},
		{"e2e no longer waits for Loki", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "      ready:\n        condition: service_completed_successfully\n", "")
		}, "does not depend on loki"},
		{"service_healthy on a service without a healthcheck", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "      loki:\n        condition: service_started", "      loki:\n        condition: service_healthy")
		}, "loki has no healthcheck"},
		{"an unknown depends_on condition", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "condition: service_completed_successfully", "condition: service_done")
		}, `unknown condition "service_done"`},
		{"a depends_on cycle", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "    image: grafana/loki:3.5.3\n", "    image: grafana/loki:3.5.3\n    depends_on: [e2e]\n")
		}, "depends_on cycle"},
		{"the readiness script is missing", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, `["scripts/wait-ready.sh"`, `["scripts/wait.sh"`)
		}, "command scripts/wait.sh: no such file"},
		{"a bind mount of a missing directory", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "- ../shared:/src/shared:ro", "- ../shared:/src/shared:ro\n      - ../nowhere:/nowhere")
		}, "../nowhere does not exist"},
		{"shared/ mounted away from the tree", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "- ../shared:/src/shared:ro", "- ../shared:/shared:ro")
		}, "no volume mounts shared/ at /src/shared"},
		{"working_dir outside the tree", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "working_dir: /src/main", "working_dir: /src")
		}, "working_dir /src is not the image's tree"},
		{"not YAML", func(t *testing.T, r *Repo) {
			r.Compose = "services: [\n"
		}, "docker-compose.e2e.yml"},
		{"no e2e service", func(t *testing.T, r *Repo) {
			replace(t, &r.Compose, "\n  e2e:\n", "\n  tests:\n")
		}, `no "e2e" service`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := clone(loadRepo(t))
			tc.seed(t, r)
			wantError(t, CheckCompose(r), tc.want)
		})
	}
}

// TestComposeShortForms: the other spellings Compose allows mean the same
// and pass (the checker must not force one style).
func TestComposeShortForms(t *testing.T) {
	r := clone(loadRepo(t))
	replace(t, &r.Compose, `command: ["make", "e2e"]`, `command: make e2e`)
	// Every entry of the e2e service's environment mapping, in the list form.
	const service, head = "\n  e2e:\n", "\n    environment:\n"
	e := strings.Index(r.Compose, service)
	j := -1
	if e >= 0 {
		j = strings.Index(r.Compose[e:], head)
	}
	if j < 0 {
		t.Fatal("docker-compose.e2e.yml: no e2e environment block")
	}
	i := e + j + len(head)
	var block, list strings.Builder
	n := 0
	for _, l := range strings.SplitAfter(r.Compose[i:], "\n") {
		k, v, ok := strings.Cut(strings.TrimPrefix(l, "      "), ": ")
		if !strings.HasPrefix(l, "      ") || strings.HasPrefix(l, "       ") || !ok {
			break
		}
		block.WriteString(l)
		v = strings.TrimSuffix(v, "\n")
		if uq := strings.Trim(v, `"`); len(uq) == len(v)-2 {
			v = uq
		}
		list.WriteString("      - " + k + "=" + v + "\n")
		n++
	}
	if n < 3 {
		t.Fatalf("docker-compose.e2e.yml: the e2e environment has %d entries, want LOKI_URL, VERSION, CI and more", n)
	}
	r.Compose = r.Compose[:i] + list.String() + r.Compose[i+block.Len():]
	wantClean(t, CheckCompose(r))
}
