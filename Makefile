# animus-plugins: every command CI and operators need. See README.md.
#
#   make demo    build everything and run the narrated end-to-end demo
#   make test    lint + unit tests with -race + e2e through the fake host (CI)
#   make bench   benchmarks (numbers for closing notes, never timed tests)
#   make compat  regenerate docs/COMPATIBILITY.md from the built binaries

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.0.0-dev)
LDFLAGS := -s -w -X github.com/animus-plugins/animus-plugins/pkg/pluginkit.buildVersion=$(VERSION)
BIN := $(CURDIR)/bin
TOOLS := $(CURDIR)/.cache/bin
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(TOOLS)/staticcheck-$(STATICCHECK_VERSION)

# Every plugin directory under plugins/ builds to bin/animus-<dir>,
# statically linked (scripts/build-plugin.sh says how and why); the example
# plugin, the e2e commands (e2e/cmd) and the tools (tools/cmd: demo, compat,
# dist) build beside them.
PLUGIN_DIRS := $(patsubst %/main.go,%,$(wildcard plugins/*/main.go))
PLUGINS := $(foreach d,$(PLUGIN_DIRS),$(BIN)/animus-$(notdir $(d))) $(BIN)/animus-example
TOOLS_BIN := $(BIN)/animus-plugin-conformance $(BIN)/animus-demo $(BIN)/animus-benchreport $(BIN)/fakeloki
MODULES := pkg/pluginkit pkg/sqlitex pkg/pgkit pkg/queuekit pkg/durablekit pkg/subjectkit pkg/golden e2e e2e/fakeloki e2e/fakeslack tools examples/animus-example $(PLUGIN_DIRS)
UNIT_PKGS := $(foreach m,$(filter-out e2e tools,$(MODULES)),./$(m)/...) ./e2e/fakehost/... ./e2e/schemacheck/...
FUZZTIME ?= 30s

.PHONY: build demo test tree-snapshot lint unit e2e e2e-loki compat bench fuzz clean tools dist install docker-e2e FORCE

build: $(PLUGINS) $(TOOLS_BIN)

$(BIN)/animus-example: FORCE
	go build -trimpath -ldflags '$(LDFLAGS)' -o $@ ./examples/animus-example

$(BIN)/animus-%: FORCE
	@if [ -d plugins/$* ]; then \
		echo "go build plugins/$* (static)"; \
		scripts/build-plugin.sh $* $@ '$(LDFLAGS)'; \
	elif [ -d tools/cmd/animus-$* ]; then \
		echo "go build tools/cmd/animus-$*"; \
		go build -trimpath -ldflags '$(LDFLAGS)' -o $@ ./tools/cmd/animus-$*; \
	else \
		echo "go build e2e/cmd/animus-$*"; \
		go build -trimpath -ldflags '$(LDFLAGS)' -o $@ ./e2e/cmd/animus-$*; \
	fi

$(BIN)/fakeloki: FORCE
	go build -trimpath -o $@ ./e2e/cmd/fakeloki

# The demo adds its scenes "two hosts, one queue" (animus-queue-postgres)
# and "two hosts, one task list" (animus-subject-postgres) when
# scripts/postgres.sh can start a throwaway cluster; without one it says
# the scenes were skipped and runs everything else as before.
demo: build
	$(PG_RUN) $(BIN)/animus-demo --bin $(BIN) $(DEMO_FLAGS)

# test fails when any command it runs changed a tracked file (a go.work.sum
# or go.mod a build rewrote, a regenerated doc): a build must never dirty
# the tree, or the next binaries are stamped -dirty. scripts/tree-guard.sh
# compares the tracked files' state before and after.
test: tree-snapshot lint unit e2e
	@scripts/tree-guard.sh check
	@echo "== test finished $$(date -u +%T)"

# tree-snapshot is test's first prerequisite (make runs them in order).
tree-snapshot:
	@scripts/tree-guard.sh snapshot

lint: $(STATICCHECK)
	@echo "== lint started $$(date -u +%T)"
	@unformatted=$$(gofmt -l $(MODULES)); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	go vet $(foreach m,$(MODULES),./$(m)/...)
	$(STATICCHECK) $(foreach m,$(MODULES),./$(m)/...)
	@for m in $(MODULES); do \
		(cd $$m && GOWORK=off go build ./... ) || { echo "$$m does not build alone (GOWORK=off)"; exit 1; }; \
		(cd $$m && GOWORK=off go mod tidy -diff >/dev/null) || { echo "$$m is not tidy: cd $$m && GOWORK=off go mod tidy"; exit 1; }; \
	done

# scripts/postgres.sh runs a throwaway PostgreSQL cluster for the tests
# that need one (pkg/pgkit, pkg/queuekit/pgstore, queue-postgres) unless
# ANIMUS_PG_TEST_DSN is already set (.ci/run and docker-compose.e2e.yml set
# it). The queue's and the durable store's semantic tests run twice: on
# SQLite, then on PostgreSQL.
PG_RUN := scripts/postgres.sh run --
unit:
	@echo "== unit started $$(date -u +%T)"
	$(PG_RUN) go test -race -count=1 $(UNIT_PKGS)
	$(PG_RUN) env ANIMUS_QUEUE_TEST_BACKEND=postgres go test -race -count=1 ./pkg/queuekit/queue/
	$(PG_RUN) env ANIMUS_DURABLE_TEST_BACKEND=postgres go test -race -count=1 ./pkg/durablekit/steplog/ ./pkg/durablekit/durable/
	$(PG_RUN) env ANIMUS_SUBJECT_TEST_BACKEND=postgres go test -race -count=1 ./pkg/subjectkit/subjects/

# e2e drives the built binaries; ANIMUS_BIN_DIR tells the tests where they are.
# (the fake host's and schemacheck's own tests already ran in unit). The
# tools' tests (tools/: the story, the compatibility matrix's staleness, the
# release tarballs) run here too: they need the same built binaries.
# scripts/victorialogs.sh starts VictoriaLogs for e2e/logslokivl unless
# VICTORIALOGS_URL is already set (.ci/run and docker-compose.e2e.yml set it).
E2E_PKGS = $(shell go list ./e2e/... ./tools/... | grep -v -e /e2e/fakehost -e /e2e/schemacheck)
e2e: build
	@echo "== e2e started $$(date -u +%T)"
	scripts/victorialogs.sh run -- $(PG_RUN) env ANIMUS_BIN_DIR=$(BIN) ANIMUS_VERSION=$(VERSION) go test -race -count=1 -timeout 20m $(E2E_PKGS)

# The logs-loki e2e suite against a real Loki (deploy/loki/README.md):
#   LOKI_URL=http://127.0.0.1:3100 LOKI_TENANT_ID=animus make e2e-loki
e2e-loki: $(BIN)/animus-logs-loki
	@test -n "$${LOKI_URL:-}" || { echo "make e2e-loki: set LOKI_URL (and LOKI_TENANT_ID for a multi-tenant Loki); see deploy/loki/README.md" >&2; exit 2; }
	ANIMUS_BIN_DIR=$(BIN) go test -count=1 -timeout 20m ./e2e/logsloki/...

# compat regenerates docs/COMPATIBILITY.md from the built binaries (their
# manifests, handshakes, refused-method calls and a conformance run; see
# tools/compat). make e2e fails when the committed matrix is stale.
compat: build $(BIN)/animus-compat
	$(PG_RUN) $(BIN)/animus-compat --bin $(BIN) --out docs/COMPATIBILITY.md

# bench tees go test's output to .cache/bench/bench.txt, then
# animus-benchreport (tools/benchreport) prints issue 19's rows with their
# limits, ratios and goals and writes docs/benchmarks.md and
# docs/benchmarks.svg. A row missing from the output is reported, not fatal;
# a failed go test still fails the target, after the report.
BENCH_OUT := $(CURDIR)/.cache/bench/bench.txt
BENCH_CMD := go test -run '^$$' -bench . -benchtime 3s -count 1 ./e2e/bench/...
bench: build
	@mkdir -p $(dir $(BENCH_OUT))
	@load_start=$$(cat /proc/loadavg 2>/dev/null || true); status=0; \
	$(PG_RUN) env ANIMUS_BIN_DIR=$(BIN) $(BENCH_CMD) 2>&1 | tee $(BENCH_OUT) || status=$$?; \
	$(BIN)/animus-benchreport -in $(BENCH_OUT) -md docs/benchmarks.md -svg docs/benchmarks.svg \
		-status $$status -loadavg-start "$$load_start" -command "$(BENCH_CMD)"; \
	if [ $$status -ne 0 ]; then echo "make bench: go test failed (exit status $$status)" >&2; exit $$status; fi

fuzz:
	go test -run '^$$' -fuzz FuzzFrameReader -fuzztime $(FUZZTIME) ./pkg/pluginkit

$(STATICCHECK):
	mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv $(TOOLS)/staticcheck $@

clean:
	rm -rf $(BIN) dist $(CURDIR)/.cache/dist-bin

FORCE:

# Release artifacts, install and Docker (issue 10); none of them is part of
# `make test`. dist/ holds only artifacts: cross builds go to .cache/.
DIST := $(CURDIR)/dist
PREFIX ?= /usr/local
DESTDIR ?=
ARM64_CC ?= aarch64-linux-gnu-gcc
CROSS_BIN := $(CURDIR)/.cache/dist-bin
PLUGIN_NAMES := $(notdir $(PLUGIN_DIRS))
NATIVE_PLATFORM = $(shell go env GOOS)_$(shell go env GOARCH)
# Every tarball entry gets the commit's time, so a rebuild of the same commit
# gives the same bytes.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)

dist: build
	rm -rf $(DIST) $(CROSS_BIN)
	@if [ "$(NATIVE_PLATFORM)" = linux_amd64 ] && command -v $(ARM64_CC) >/dev/null 2>&1; then \
		for d in $(PLUGIN_NAMES); do \
			echo "go build plugins/$$d (linux/arm64, CC=$(ARM64_CC), static)"; \
			CC=$(ARM64_CC) GOOS=linux GOARCH=arm64 \
				scripts/build-plugin.sh $$d $(CROSS_BIN)/linux_arm64/animus-$$d '$(LDFLAGS)'; \
		done; \
	else \
		echo "dist: no $(ARM64_CC) (apt-get install gcc-aarch64-linux-gnu), so no linux_arm64 tarballs"; \
	fi
	go run ./tools/cmd/animus-dist -version '$(VERSION)' -out $(DIST) -license LICENSE -mtime $(SOURCE_DATE_EPOCH) \
		-platform $(NATIVE_PLATFORM)=$(BIN) \
		$$( [ -d $(CROSS_BIN)/linux_arm64 ] && echo -platform linux_arm64=$(CROSS_BIN)/linux_arm64 ) \
		$(PLUGIN_NAMES)

install: build
	scripts/install.sh --prefix '$(abspath $(PREFIX))' --destdir '$(DESTDIR)' --from $(BIN) $(PLUGIN_NAMES)

docker-e2e:
	VERSION='$(VERSION)' docker compose -f docker-compose.e2e.yml up --build --abort-on-container-exit --exit-code-from e2e
