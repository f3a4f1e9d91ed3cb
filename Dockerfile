# syntax=docker/dockerfile:1
#
# animus-plugins: the seven plugin binaries in a slim runtime image.
#
#   docker build --build-arg VERSION=$(git describe --tags --always --dirty) -t animus-plugins .
#   docker run --rm animus-plugins                  # lists the plugins and their manifests
#   docker run --rm animus-plugins animus-queue-sqlite --manifest
#
# The plugins are not servers: the Animus daemon spawns each one as a child
# process and talks JSON-RPC over its stdin/stdout. So the image has no
# healthcheck, exposes no port, and its entrypoint only describes what is
# installed (or runs the command it is given). Use it as a base or copy the
# binaries out of it into the image that runs the daemon:
#   COPY --from=animus-plugins /usr/local/bin/animus-* /usr/local/bin/
#
# Stages: build (Go + gcc, runs `make build`), e2e (the build stage, used by
# docker-compose.e2e.yml to run `make e2e`), runtime (the default target).

ARG GO_VERSION=1.26
ARG DEBIAN_RELEASE=bookworm

FROM golang:${GO_VERSION}-${DEBIAN_RELEASE} AS build
# VERSION is what `git describe` says on the host; .git is not sent to the
# build (see .dockerignore), so the Makefile could not work it out here.
ARG VERSION=0.0.0-dev
# SQLite comes from mattn/go-sqlite3, which is cgo: the golang image has gcc
# and a static glibc (libc6-dev), and scripts/build-plugin.sh links every
# plugin statically, so the runtime stage's glibc does not matter to them.
ENV CGO_ENABLED=1
WORKDIR /src/main
COPY . .
# The same command CI and developers use, with the same flags and stamping.
RUN make build VERSION="${VERSION}"

FROM build AS e2e
# docker-compose.e2e.yml mounts shared/ at /src/shared, beside the tree, which
# is where the schema loader looks (the same layout as a native checkout).
CMD ["make", "e2e"]

FROM debian:${DEBIAN_RELEASE}-slim AS runtime
ARG VERSION=0.0.0-dev
ARG REVISION=unknown
ARG CREATED=1970-01-01T00:00:00Z
LABEL org.opencontainers.image.title="animus-plugins" \
      org.opencontainers.image.description="Animus plugins: SQLite subject, queue and durable-store backends, a PostgreSQL queue and durable store, webhook notifier, Slack trigger, Loki log storage, HTTP transport" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/animus-plugins/animus-plugins" \
      org.opencontainers.image.vendor="The animus-plugins Authors"
# ca-certificates: the Slack, Loki and webhook plugins make HTTPS calls.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 animus \
 && useradd --system --uid 10001 --gid animus --create-home --home-dir /home/animus --shell /usr/sbin/nologin animus
# One line per plugin so that a new plugins/<dir> without a line here fails
# the packaging test (e2e/packaging) instead of silently missing from images.
COPY --from=build /src/main/bin/animus-subject-sqlite /usr/local/bin/animus-subject-sqlite
COPY --from=build /src/main/bin/animus-subject-postgres /usr/local/bin/animus-subject-postgres
COPY --from=build /src/main/bin/animus-queue-sqlite /usr/local/bin/animus-queue-sqlite
COPY --from=build /src/main/bin/animus-queue-postgres /usr/local/bin/animus-queue-postgres
COPY --from=build /src/main/bin/animus-durable-sqlite /usr/local/bin/animus-durable-sqlite
COPY --from=build /src/main/bin/animus-durable-postgres /usr/local/bin/animus-durable-postgres
COPY --from=build /src/main/bin/animus-notifier-webhook /usr/local/bin/animus-notifier-webhook
COPY --from=build /src/main/bin/animus-trigger-slack /usr/local/bin/animus-trigger-slack
COPY --from=build /src/main/bin/animus-logs-loki /usr/local/bin/animus-logs-loki
COPY --from=build /src/main/bin/animus-transport-http /usr/local/bin/animus-transport-http
COPY --chmod=0755 scripts/docker-entrypoint.sh /usr/local/bin/animus-plugins-info
COPY LICENSE /usr/share/doc/animus-plugins/LICENSE
USER animus
WORKDIR /home/animus
ENTRYPOINT ["/usr/local/bin/animus-plugins-info"]
