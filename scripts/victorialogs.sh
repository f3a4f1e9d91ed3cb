#!/usr/bin/env bash
# VictoriaLogs for the logs-loki e2e tests: a real, independent
# implementation of Loki's push API (POST /insert/loki/api/v1/push) whose
# own query API (/select/logsql/query) shows what a push stored.
#
#   scripts/victorialogs.sh start    install if missing, start on 127.0.0.1,
#                                    print VICTORIALOGS_URL=http://127.0.0.1:<port>
#   scripts/victorialogs.sh stop     stop it and delete its data
#   scripts/victorialogs.sh url      print VICTORIALOGS_URL=… of the running one
#   scripts/victorialogs.sh install  only build the binary
#   scripts/victorialogs.sh run -- CMD ARGS…
#                                    run CMD with VICTORIALOGS_URL exported:
#                                    the caller's if already set, else one
#                                    started for CMD and stopped after it
#                                    (exit status is CMD's). If none can be
#                                    started, CI=true fails; elsewhere CMD
#                                    runs without it and the tests that need
#                                    it skip, saying why.
#
# stdout carries only the VICTORIALOGS_URL= line, so callers can
#   eval "$(scripts/victorialogs.sh start)"; export VICTORIALOGS_URL
# Everything else goes to stderr. start is idempotent: if the instance
# recorded in the state directory answers /health, its URL is printed again.
#
# Environment: VICTORIALOGS_PORT (default: the first free port from 19428),
# VICTORIALOGS_STATE (default .cache/victorialogs: pid, url, log, data dir).
#
# The binary is built from the Go module proxy (Apache-2.0, CGO off, about
# a minute on two cores) into .cache/bin/victoria-logs-<version>, like
# staticcheck. It runs with -loki.disableMessageParsing so the Loki line
# is stored verbatim in _msg: by default VictoriaLogs unpacks a JSON line
# into fields, and the plugin's line (a LogEntry: level, source, target…)
# would then collide with the stream labels and structured metadata the
# tests want to see on their own.
set -euo pipefail

VERSION=v1.52.1
PKG=github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TOOLS="$ROOT/.cache/bin"
BIN="$TOOLS/victoria-logs-$VERSION"
STATE="${VICTORIALOGS_STATE:-$ROOT/.cache/victorialogs}"

log() { echo "victorialogs: $*" >&2; }

install_bin() {
	[ -x "$BIN" ] && return 0
	log "building $PKG@$VERSION"
	mkdir -p "$TOOLS"
	local tmp
	tmp="$(mktemp -d "$TOOLS/.vl-build.XXXXXX")"
	# GOFLAGS=-mod=mod is not needed: go install pkg@version ignores the
	# work tree's go.work and go.mod.
	if ! GOBIN="$tmp" CGO_ENABLED=0 go install "$PKG@$VERSION" >&2; then
		rm -rf "$tmp"
		log "go install failed"
		return 1
	fi
	mv "$tmp/victoria-logs" "$BIN"
	rm -rf "$tmp"
}

# healthy: GET $1/health answers 200. Plain bash (/dev/tcp), as a fresh
# machine may lack curl.
healthy() {
	local hostport="${1#http://}"
	timeout 2 bash -c '
		exec 3<>"/dev/tcp/${1%:*}/${1#*:}" || exit 1
		printf "GET /health HTTP/1.0\r\nHost: %s\r\n\r\n" "$1" >&3
		read -r _ code _ <&3
		[ "$code" = 200 ]' _ "$hostport" 2>/dev/null
}

# port_free: nothing accepts connections on 127.0.0.1:$1.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

running_url() {
	[ -f "$STATE/pid" ] && [ -f "$STATE/url" ] || return 1
	kill -0 "$(cat "$STATE/pid")" 2>/dev/null || return 1
	local url
	url="$(cat "$STATE/url")"
	healthy "$url" || return 1
	echo "$url"
}

start() {
	local url
	if url="$(running_url)"; then
		log "already running at $url"
		echo "VICTORIALOGS_URL=$url"
		return 0
	fi
	install_bin
	stop_quiet
	mkdir -p "$STATE"
	local port="${VICTORIALOGS_PORT:-}" tries=0
	if [ -z "$port" ]; then
		port=19428
		while ! port_free "$port"; do
			port=$((port + 1))
			[ "$port" -lt 19528 ] || { log "no free port in 19428-19527"; return 1; }
		done
	fi
	local data
	data="$(mktemp -d "${TMPDIR:-/tmp}/victorialogs-data.XXXXXX")"
	echo "$data" >"$STATE/data"
	url="http://127.0.0.1:$port"
	# The redirections matter: the server must not hold the caller's stdout
	# (a $(…) capture would wait for it forever).
	"$BIN" \
		-httpListenAddr "127.0.0.1:$port" \
		-storageDataPath "$data" \
		-loki.disableMessageParsing \
		-retentionPeriod 7d \
		-memory.allowedPercent 20 \
		-loggerLevel WARN \
		</dev/null >"$STATE/log" 2>&1 &
	echo $! >"$STATE/pid"
	echo "$url" >"$STATE/url"
	until healthy "$url"; do
		if ! kill -0 "$(cat "$STATE/pid")" 2>/dev/null; then
			log "exited during startup; log follows"
			cat "$STATE/log" >&2
			return 1
		fi
		tries=$((tries + 1))
		if [ "$tries" -ge 300 ]; then
			log "no /health after 30 s; log follows"
			cat "$STATE/log" >&2
			stop_quiet
			return 1
		fi
		sleep 0.1
	done
	log "started $url (pid $(cat "$STATE/pid"), data $data)"
	echo "VICTORIALOGS_URL=$url"
}

stop_quiet() {
	if [ -f "$STATE/pid" ]; then
		local pid i
		pid="$(cat "$STATE/pid")"
		if kill -0 "$pid" 2>/dev/null; then
			kill -TERM "$pid" 2>/dev/null || true
			for i in $(seq 1 100); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.1
			done
			kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	if [ -f "$STATE/data" ]; then
		rm -rf "$(cat "$STATE/data")"
	fi
	rm -f "$STATE/pid" "$STATE/url" "$STATE/data"
}

# run_with: see "run" above.
run_with() {
	[ "${1:-}" = "--" ] && shift
	[ $# -gt 0 ] || { echo "usage: $0 run -- CMD ARGS…" >&2; exit 2; }
	if [ -n "${VICTORIALOGS_URL:-}" ]; then
		exec "$@"
	fi
	local line url status=0
	if url="$(running_url)"; then
		# Someone else's instance (a plain `start`): use it, leave it running.
		export VICTORIALOGS_URL="$url"
		exec "$@"
	fi
	if ! line="$(start)"; then
		if [ "${CI:-}" = true ]; then
			log "could not start VictoriaLogs; CI needs it for e2e/logslokivl"
			exit 1
		fi
		log "could not start VictoriaLogs; its tests will skip"
		exec "$@"
	fi
	export "${line?}"
	trap 'stop_quiet' EXIT
	"$@" || status=$?
	exit "$status"
}

case "${1:-start}" in
start) start ;;
stop)
	stop_quiet
	log "stopped"
	;;
url)
	url="$(running_url)" || { log "not running"; exit 1; }
	echo "VICTORIALOGS_URL=$url"
	;;
install) install_bin ;;
run)
	shift
	run_with "$@"
	;;
*)
	echo "usage: $0 start|stop|url|install|run -- CMD…" >&2
	exit 2
	;;
esac
