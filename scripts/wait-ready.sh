#!/usr/bin/env bash
# wait-ready.sh URL...: wait until every URL answers 2xx, for at most
# WAIT_READY_SECS seconds (default 120) in all.
#
# docker-compose.e2e.yml runs it as a one-shot service before the e2e
# container starts, because the Loki and VictoriaLogs images carry no shell
# or HTTP client for a healthcheck, and the e2e command itself must stay
# exactly `make e2e`. Loki's /ready answers 503 for its first ~15 s.
set -euo pipefail
deadline=$(($(date +%s) + ${WAIT_READY_SECS:-120}))
for url in "$@"; do
	until curl -fsS -o /dev/null --max-time 2 "$url"; do
		if (($(date +%s) >= deadline)); then
			echo "wait-ready: $url not ready after ${WAIT_READY_SECS:-120} s" >&2
			exit 1
		fi
		sleep 1
	done
	echo "wait-ready: $url is ready"
done
