#!/usr/bin/env bash
# tree-guard.sh snapshot|check: make test's promise that no command it runs
# changes a tracked file. snapshot records the state of every tracked file
# (the uncommitted diff included, so a developer's own edits are not
# blamed); check fails, naming the files, if that state moved since.
set -euo pipefail
cd "$(dirname "$0")/.."
state=.cache/tree-guard
mkdir -p .cache
fingerprint() { git diff HEAD --no-ext-diff --binary | sha256sum | cut -d' ' -f1; }
case "${1:-}" in
snapshot)
	fingerprint >"$state"
	git diff HEAD --name-only >"$state.files"
	;;
check)
	[ -f "$state" ] || { echo "tree-guard: no snapshot; run '$0 snapshot' first" >&2; exit 2; }
	if [ "$(fingerprint)" != "$(cat "$state")" ]; then
		echo "tree-guard: make test changed tracked files:" >&2
		comm -13 <(sort "$state.files") <(git diff HEAD --name-only | sort) >&2 || true
		echo "tree-guard: the whole uncommitted diff now:" >&2
		git diff HEAD --stat >&2
		exit 1
	fi
	echo "== tree-guard: no tracked file changed"
	;;
*)
	echo "usage: $0 snapshot|check" >&2
	exit 2
	;;
esac
