#!/usr/bin/env bash
# build-plugin.sh DIR OUT [LDFLAGS]: builds plugins/DIR into OUT, statically
# linked, for the GOOS/GOARCH (and CC) in the environment. `make build` and
# `make dist` both build plugins through here, so the two cannot differ.
#
# Why static: a plugin then starts without the dynamic loader, which the
# daemon pays on every call for queue plugins (one process per call):
# animus-queue-sqlite's spawn → initialize → queue/stats → exit went from
# 3.16–3.22 to 2.99–3.03 ms p50 on the 2-vCPU VM of NOTES.md; and a
# release binary runs on any Linux of its architecture, whatever its glibc.
#
# A plugin that links the SQLite driver (mattn/go-sqlite3 is cgo) links
# glibc statically, with Go's own DNS resolver and user lookup (netgo,
# osusergo: a static glibc cannot load NSS modules) and without SQLite's
# load_extension (it needs dlopen; no plugin loads extensions). Every other
# plugin is pure Go and builds with CGO_ENABLED=0: with cgo on, importing
# net alone linked runtime/cgo and the loader into it, for nothing.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 DIR OUT [LDFLAGS]" >&2; exit 2; }
dir=$1 out=$(realpath -m -- "$2") ldflags=${3:-} # OUT as given, before the cd
cd "$(dirname "$0")/.."
pkg=./plugins/$dir
if go list -deps "$pkg" | grep -qx 'github.com/mattn/go-sqlite3'; then
	CGO_ENABLED=1 exec go build -trimpath -tags netgo,osusergo,sqlite_omit_load_extension \
		-ldflags "$ldflags -extldflags=-static" -o "$out" "$pkg"
fi
CGO_ENABLED=0 exec go build -trimpath -ldflags "$ldflags" -o "$out" "$pkg"
