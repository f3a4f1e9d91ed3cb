# animus-plugins: every command CI and operators need. See README.md.
#
#   make demo    build everything and run the narrated end-to-end demo
#   make test    lint + unit tests with -race + e2e through the fake host (CI)
#   make bench   benchmarks (numbers for closing notes, never timed tests)

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.0.0-dev)
LDFLAGS := -s -w -X github.com/animus-plugins/animus-plugins/pkg/pluginkit.buildVersion=$(VERSION)
BIN := $(CURDIR)/bin
TOOLS := $(CURDIR)/.cache/bin
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(TOOLS)/staticcheck-$(STATICCHECK_VERSION)

# Every plugin directory under plugins/ builds to bin/animus-<dir>; the
# example plugin and the e2e tools build beside them.
PLUGIN_DIRS := $(patsubst %/main.go,%,$(wildcard plugins/*/main.go))
PLUGINS := $(foreach d,$(PLUGIN_DIRS),$(BIN)/animus-$(notdir $(d))) $(BIN)/animus-example
TOOLS_BIN := $(BIN)/animus-plugin-conformance $(BIN)/animus-demo
MODULES := pkg/pluginkit pkg/sqlitex e2e examples/animus-example $(PLUGIN_DIRS)
UNIT_PKGS := $(foreach m,$(filter-out e2e,$(MODULES)),./$(m)/...) ./e2e/fakehost/... ./e2e/schemacheck/...
FUZZTIME ?= 30s

.PHONY: build demo test lint unit e2e bench fuzz clean tools FORCE

build: $(PLUGINS) $(TOOLS_BIN)

$(BIN)/animus-example: FORCE
	go build -trimpath -ldflags '$(LDFLAGS)' -o $@ ./examples/animus-example

$(BIN)/animus-%: FORCE
	@if [ -d plugins/$* ]; then \
		echo "go build plugins/$*"; \
		go build -trimpath -ldflags '$(LDFLAGS)' -o $@ ./plugins/$*; \
	else \
		echo "go build e2e/cmd/animus-$*"; \
		go build -trimpath -ldflags '$(LDFLAGS)' -o $@ ./e2e/cmd/animus-$*; \
	fi

demo: build
	$(BIN)/animus-demo --bin $(BIN)

test: lint unit e2e

lint: $(STATICCHECK)
	@unformatted=$$(gofmt -l $(MODULES)); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	go vet $(foreach m,$(MODULES),./$(m)/...)
	$(STATICCHECK) $(foreach m,$(MODULES),./$(m)/...)
	@for m in $(filter-out e2e,$(MODULES)); do \
		(cd $$m && GOWORK=off go build ./... ) || { echo "$$m does not build alone (GOWORK=off)"; exit 1; }; \
	done

unit:
	go test -race -count=1 $(UNIT_PKGS)

# e2e drives the built binaries; ANIMUS_BIN_DIR tells the tests where they are.
# (the fake host's and schemacheck's own tests already ran in unit).
E2E_PKGS = $(shell go list ./e2e/... | grep -v -e /e2e/fakehost -e /e2e/schemacheck)
e2e: build
	ANIMUS_BIN_DIR=$(BIN) go test -race -count=1 -timeout 20m $(E2E_PKGS)

bench: build
	ANIMUS_BIN_DIR=$(BIN) go test -run '^$$' -bench . -benchtime 3s -count 1 ./e2e/bench/...

fuzz:
	go test -run '^$$' -fuzz FuzzFrameReader -fuzztime $(FUZZTIME) ./pkg/pluginkit

$(STATICCHECK):
	mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv $(TOOLS)/staticcheck $@

clean:
	rm -rf $(BIN) dist

FORCE:
