// Package packaging checks the files that package the plugins, none of
// which can run on this project's machines as they would for a user: there
// is no Docker engine, and `make dist`/`make install` write outside the
// test's reach.
//
//   - Dockerfile: parsed into stages and instructions; every stage, COPY
//     --from reference, ARG, context path (against .dockerignore) and make
//     target it names must exist; every plugins/<dir>/main.go must have its
//     binary copied into the runtime image; the runtime user must be the
//     non-root `animus`; no healthcheck; an exec-form entrypoint that the
//     image contains.
//   - docker-compose.e2e.yml: parsed as YAML; every build context,
//     dockerfile, target stage, mounted path, script and depends_on service
//     must exist; the e2e service must run exactly the native `make e2e` in
//     the tree's working directory, with LOKI_URL and VICTORIALOGS_URL
//     pointing at the Loki and VictoriaLogs services of the same file.
//   - Makefile: the dist, install and docker-e2e targets call the tools this
//     package checks. The release packager itself (tools/dist, behind
//     `make dist`) is run on the built binaries by its own test there.
//   - scripts/docker-entrypoint.sh (the image's entrypoint): run against a
//     directory laid out like the image's /usr/local/bin; scripts/wait-ready.sh
//     (the compose file's readiness gate): run against local servers.
//   - scripts/install.sh (behind `make install`): installs into a temp
//     PREFIX, prints plugins.yaml entries that parse and point at the
//     installed files, and changes no file outside PREFIX.
//
// The checkers are plain functions over file contents, so each test also
// feeds them seeded defects (a missing stage, a root user, a command that
// differs from `make e2e`, ...) to prove they catch them.
package packaging
