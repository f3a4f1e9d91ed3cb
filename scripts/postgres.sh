#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the pgkit tests and the PostgreSQL
# plugins' e2e tests: initdb in a temporary directory, listening only on
# 127.0.0.1 with trust authentication, deleted again by stop.
#
#   scripts/postgres.sh start    initdb and start, create database animus,
#                                print ANIMUS_PG_TEST_DSN=postgres://…/animus
#   scripts/postgres.sh stop     stop it (fast, then KILL) and delete its data
#   scripts/postgres.sh restart  pg_ctl restart -m fast of the recorded
#                                cluster on the same port (tests call this
#                                in the middle of a run)
#   scripts/postgres.sh dsn      print ANIMUS_PG_TEST_DSN=… of the running one
#   scripts/postgres.sh run -- CMD ARGS…
#                                run CMD with ANIMUS_PG_TEST_DSN exported:
#                                the caller's if already set, else the
#                                recorded running one, else one started for
#                                CMD and stopped after it (exit status is
#                                CMD's). If none can be started, CI=true
#                                fails; elsewhere CMD runs without it and
#                                the tests that need it skip, saying why.
#                                ANIMUS_PG_TEST_SCRIPT (this script's
#                                absolute path) is exported too, so tests
#                                can call restart.
#
# stdout carries only the ANIMUS_PG_TEST_DSN= line, so callers can
#   eval "$(scripts/postgres.sh start)"; export ANIMUS_PG_TEST_DSN
# Everything else goes to stderr. start is idempotent: if the cluster
# recorded in the state directory answers, its DSN is printed again.
#
# Environment: ANIMUS_PG_PORT (default: the first free port from 15432),
# ANIMUS_PG_STATE (default .cache/postgres: the paths of the cluster).
#
# PostgreSQL refuses to run as root. Run as root (a CI container), the
# cluster belongs to a system user animus-pg, created if missing; the
# binaries run through runuser. The DSN's role is the cluster superuser
# "postgres", so tests may call pg_terminate_backend. fsync stays on: the
# tests check that what a commit acknowledged survives a restart.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SELF="$ROOT/scripts/$(basename "$0")"
STATE="${ANIMUS_PG_STATE:-$ROOT/.cache/postgres}"
PGUSER_OS=animus-pg
ROLE=postgres
DB=animus

log() { echo "postgres: $*" >&2; }

# find_bindir: the directory of initdb, pg_ctl and psql. PATH first (it may
# hold symlinks, so resolve them to reach the sibling tools), else the
# newest Debian-style /usr/lib/postgresql/<major>/bin.
find_bindir() {
	local p
	if p="$(command -v initdb 2>/dev/null)" && command -v pg_ctl >/dev/null 2>&1; then
		dirname "$(readlink -f "$p")"
		return 0
	fi
	p="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
	[ -n "$p" ] && [ -x "$p/initdb" ] || return 1
	echo "$p"
}

# as_owner: run a PostgreSQL binary as the cluster's OS user. cd / first:
# the caller's directory may be unreadable to animus-pg.
as_owner() {
	if [ "$(id -u)" = 0 ]; then
		(cd / && runuser -u "$PGUSER_OS" -- "$@")
	else
		"$@"
	fi
}

ensure_os_user() {
	[ "$(id -u)" = 0 ] || return 0
	id -u "$PGUSER_OS" >/dev/null 2>&1 && return 0
	log "creating system user $PGUSER_OS"
	useradd --system --no-create-home --home-dir /nonexistent \
		--shell /usr/sbin/nologin "$PGUSER_OS" >&2
}

# port_free: nothing accepts connections on 127.0.0.1:$1.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

dsn_for() { echo "postgres://$ROLE@127.0.0.1:$1/$DB?sslmode=disable"; }

# answers: the server on 127.0.0.1:$2 is the cluster in data directory $1
# and accepts queries. Checking data_directory, not only the port, keeps a
# stale state file from handing out somebody else's server.
answers() {
	local bindir dir
	bindir="$(cat "$STATE/bindir" 2>/dev/null)" || return 1
	dir="$(PGCONNECT_TIMEOUT=2 timeout 5 "$bindir/psql" -XAtq -h 127.0.0.1 -p "$2" -U "$ROLE" -d "$DB" \
		-c 'SHOW data_directory' 2>/dev/null)" || return 1
	[ "$dir" = "$1" ]
}

# running_dsn: the DSN of the recorded cluster if it answers. While its
# data directory exists it is given 10 s: a test may be restarting it at
# this very moment, and taking it for dead would stop it under that test.
running_dsn() {
	[ -f "$STATE/tmp" ] && [ -f "$STATE/port" ] || return 1
	local tmp port i
	tmp="$(cat "$STATE/tmp")"
	port="$(cat "$STATE/port")"
	for i in $(seq 1 50); do
		if answers "$tmp/data" "$port"; then
			dsn_for "$port"
			return 0
		fi
		[ -d "$tmp/data" ] || return 1
		sleep 0.2
	done
	return 1
}

# locked: run "$@" holding $STATE/lock, so two callers starting at once
# (two `run`s in parallel) do not both initdb and then stop each other's
# cluster. Servers are started with fd 9 closed, or they would hold the
# lock forever.
locked() {
	mkdir -p "$STATE"
	(
		flock -w 300 9 || { log "timed out waiting for $STATE/lock"; exit 1; }
		"$@"
	) 9>"$STATE/lock"
}

start() {
	local dsn
	if dsn="$(running_dsn)"; then
		log "already running: $dsn"
		echo "ANIMUS_PG_TEST_DSN=$dsn"
		return 0
	fi
	local bindir
	bindir="$(find_bindir)" || { log "no initdb on PATH nor in /usr/lib/postgresql/*/bin"; return 1; }
	stop_quiet
	ensure_os_user
	mkdir -p "$STATE"
	echo "$bindir" >"$STATE/bindir"
	# Picking a free port and binding it are two steps: clusters started
	# at the same moment from different state directories (a test's
	# private cluster beside the shared one) would pick the same port.
	# One machine-wide lock covers both, released once the server listens.
	exec 8>"${TMPDIR:-/tmp}/animus-pg-ports.lock"
	flock -w 300 8 || { log "timed out waiting for the port lock"; return 1; }
	local port="${ANIMUS_PG_PORT:-}"
	if [ -z "$port" ]; then
		port=15432
		while ! port_free "$port"; do
			port=$((port + 1))
			[ "$port" -lt 15532 ] || { log "no free port in 15432-15531"; return 1; }
		done
	fi
	local tmp
	tmp="$(mktemp -d "${TMPDIR:-/tmp}/animus-pg.XXXXXX")"
	# Record it before anything can fail, so stop_quiet cleans it up.
	echo "$tmp" >"$STATE/tmp"
	echo "$port" >"$STATE/port"
	mkdir -p "$tmp/sock"
	if [ "$(id -u)" = 0 ]; then
		chown -R "$PGUSER_OS" "$tmp"
		# mktemp's 0700 keeps others out; the owner changes, the mode stays.
	fi
	if ! as_owner "$bindir/initdb" -D "$tmp/data" -U "$ROLE" -E UTF8 --locale=C \
		--auth-local=trust --auth-host=reject >"$STATE/initdb.log" 2>&1; then
		log "initdb failed; output follows"
		cat "$STATE/initdb.log" >&2
		stop_quiet
		return 1
	fi
	# Trust only on loopback TCP and the private socket directory; every
	# other address is rejected even though listen_addresses excludes it.
	cat >"$tmp/data/pg_hba.conf" <<EOF
local all all trust
host all all 127.0.0.1/32 trust
EOF
	cat >>"$tmp/data/postgresql.conf" <<EOF

# scripts/postgres.sh
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$tmp/sock'
fsync = on
synchronous_commit = on
max_connections = 200
shared_buffers = 32MB
log_min_messages = warning
EOF
	if [ "$(id -u)" = 0 ]; then
		chown "$PGUSER_OS" "$tmp/data/pg_hba.conf" "$tmp/data/postgresql.conf"
	fi
	# -l: the server must not hold the caller's stdout (a $(…) capture
	# would wait for it forever). The log lives in the temp directory,
	# which animus-pg can write and the state directory may not be.
	if ! as_owner "$bindir/pg_ctl" -D "$tmp/data" -l "$tmp/log" -w -t 60 start >&2 9>&- 8>&-; then
		exec 8>&-
		log "pg_ctl start failed; log follows"
		cat "$tmp/log" >&2 || true
		stop_quiet
		return 1
	fi
	exec 8>&-
	if ! as_owner "$bindir/psql" -XAtq -h "$tmp/sock" -p "$port" -U "$ROLE" -d postgres \
		-c "CREATE DATABASE $DB" >&2; then
		log "CREATE DATABASE $DB failed"
		stop_quiet
		return 1
	fi
	dsn="$(dsn_for "$port")"
	log "started $dsn (data $tmp/data, log $tmp/log)"
	echo "ANIMUS_PG_TEST_DSN=$dsn"
}

restart() {
	[ -f "$STATE/tmp" ] && [ -f "$STATE/bindir" ] || { log "no recorded cluster in $STATE"; return 1; }
	local tmp bindir
	tmp="$(cat "$STATE/tmp")"
	bindir="$(cat "$STATE/bindir")"
	# -m fast: disconnect clients and shut down cleanly (the tests want
	# their connections cut, not a crash); -w: return once it accepts
	# connections again. The port is in postgresql.conf, so it is kept.
	if ! as_owner "$bindir/pg_ctl" -D "$tmp/data" -l "$tmp/log" -m fast -w -t 60 restart >&2 9>&-; then
		log "pg_ctl restart failed; log follows"
		tail -n 50 "$tmp/log" >&2 || true
		return 1
	fi
	log "restarted"
}

stop_quiet() {
	[ -f "$STATE/tmp" ] || { rm -f "$STATE/port"; return 0; }
	local tmp bindir pid i
	tmp="$(cat "$STATE/tmp")"
	bindir="$(cat "$STATE/bindir" 2>/dev/null || true)"
	if [ -f "$tmp/data/postmaster.pid" ]; then
		if [ -n "$bindir" ]; then
			as_owner "$bindir/pg_ctl" -D "$tmp/data" -m fast -w -t 30 stop >/dev/null 2>&1 || true
		fi
		# pg_ctl gave up (or was missing): KILL the postmaster; its
		# children exit when they notice it is gone.
		if [ -f "$tmp/data/postmaster.pid" ]; then
			pid="$(head -n 1 "$tmp/data/postmaster.pid" 2>/dev/null || true)"
			if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
				kill -KILL "$pid" 2>/dev/null || true
				for i in $(seq 1 50); do
					kill -0 "$pid" 2>/dev/null || break
					sleep 0.1
				done
			fi
		fi
	fi
	case "$tmp" in
	*/animus-pg.*) rm -rf "$tmp" ;; # only ever what start created
	esac
	rm -f "$STATE/tmp" "$STATE/port" "$STATE/initdb.log"
}

# start_for_run: like start, but the line says whether this call started
# the cluster ("own ANIMUS_PG_TEST_DSN=…") or found it ("reuse …").
start_for_run() {
	local dsn line
	if dsn="$(running_dsn)"; then
		echo "reuse ANIMUS_PG_TEST_DSN=$dsn"
		return 0
	fi
	line="$(start)" || return 1
	echo "own $line"
}

# run_with: see "run" above.
run_with() {
	[ "${1:-}" = "--" ] && shift
	[ $# -gt 0 ] || { echo "usage: $0 run -- CMD ARGS…" >&2; exit 2; }
	export ANIMUS_PG_TEST_SCRIPT="$SELF"
	if [ -n "${ANIMUS_PG_TEST_DSN:-}" ]; then
		exec "$@"
	fi
	local line dsn status=0
	if dsn="$(running_dsn)"; then
		# Someone else's cluster (a plain `start`): use it, leave it running.
		export ANIMUS_PG_TEST_DSN="$dsn"
		exec "$@"
	fi
	# Under the lock, decide again: a parallel `run` may have started one
	# meanwhile, which is then used but left for its owner to stop.
	if ! line="$(locked start_for_run)"; then
		if [ "${CI:-}" = true ]; then
			log "could not start PostgreSQL; CI needs it for the pgkit and PostgreSQL plugin tests"
			exit 1
		fi
		log "could not start PostgreSQL; its tests will skip"
		exec "$@"
	fi
	export "${line#* }"
	if [ "${line%% *}" = reuse ]; then
		exec "$@"
	fi
	trap 'locked stop_quiet' EXIT
	"$@" || status=$?
	exit "$status"
}

case "${1:-start}" in
start) locked start ;;
stop)
	locked stop_quiet
	log "stopped"
	;;
restart) restart ;; # not locked: it must not wait behind another caller's start
dsn)
	dsn="$(running_dsn)" || { log "not running"; exit 1; }
	echo "ANIMUS_PG_TEST_DSN=$dsn"
	;;
run)
	shift
	run_with "$@"
	;;
*)
	echo "usage: $0 start|stop|restart|dsn|run -- CMD…" >&2
	exit 2
	;;
esac
