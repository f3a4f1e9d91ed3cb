#!/usr/bin/env bash
# install.sh: copy plugin binaries into $PREFIX/bin and print the
# plugins.yaml entries an operator adds to register them.
#
#   scripts/install.sh [--prefix DIR] [--from DIR] [--destdir DIR] <plugin dir>...
#
# Behind `make install PREFIX=...` (default PREFIX=/usr/local, --from bin).
# It writes nothing but the binaries under $DESTDIR$PREFIX/bin: never an
# operator's ~/.animus/plugins.yaml, lockfile or plugin dir. Animus finds
# these binaries only through registry entries (their names do not start
# with animus-plugin-), so the entries are printed for the operator to add,
# or `animus plugin install --path` writes them itself.
#
# Every binary is checked (it exists, runs, and answers --manifest with its
# own name) before the first one is copied, so a bad build installs nothing.
# Each copy lands under a temporary name and is renamed over the old one, so
# a daemon spawning a plugin mid-install sees the old or the new binary,
# never half a file.
set -euo pipefail

prefix=/usr/local
from=bin
destdir=
plugins=()
while (($#)); do
	case "$1" in
	--prefix) prefix=${2:?--prefix needs a value}; shift 2 ;;
	--from) from=${2:?--from needs a value}; shift 2 ;;
	--destdir) destdir=${2-}; shift 2 ;;
	-h | --help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "install.sh: unknown option $1" >&2; exit 2 ;;
	*) plugins+=("$1"); shift ;;
	esac
done
if ((${#plugins[@]} == 0)); then
	echo "install.sh: no plugins named (e.g. queue-sqlite)" >&2
	exit 2
fi
case "$prefix" in
/*) ;;
*) echo "install.sh: --prefix must be absolute (the registry stores the path as given): $prefix" >&2; exit 2 ;;
esac
prefix=${prefix%/}

# Check everything first.
version=
for dir in "${plugins[@]}"; do
	name=animus-$dir
	src=$from/$name
	if [[ ! -f $src || ! -x $src ]]; then
		echo "install.sh: $src is missing or not executable (run make build first)" >&2
		exit 1
	fi
	# The daemon probes with a scrubbed environment; do the same.
	if ! manifest=$(env -i PATH="$PATH" HOME="${HOME:-/}" "$src" --manifest </dev/null 2>/dev/null); then
		echo "install.sh: $src --manifest failed; not a working plugin binary" >&2
		exit 1
	fi
	if [[ $manifest != *"\"name\":\"$name\""* ]]; then
		echo "install.sh: $src --manifest does not name $name" >&2
		exit 1
	fi
	v=${manifest#*\"version\":\"}
	version=${v%%\"*}
done

bindir=$destdir$prefix/bin
mkdir -p -- "$bindir"
for dir in "${plugins[@]}"; do
	name=animus-$dir
	tmp=$bindir/.$name.install-$$
	install -m 0755 -- "$from/$name" "$tmp"
	mv -f -- "$tmp" "$bindir/$name"
done

# YAML needs quotes around paths with characters it treats specially.
yaml_path() {
	if [[ $1 =~ ^[A-Za-z0-9_./-]+$ ]]; then
		printf '%s' "$1"
	else
		local s=${1//\\/\\\\}
		printf '"%s"' "${s//\"/\\\"}"
	fi
}

echo "installed ${#plugins[@]} plugin(s), version $version, into $bindir"
echo
echo "Register them: add these entries to ~/.animus/plugins.yaml (or <project>/.animus/plugins.yaml)."
echo "This script never edits that file. Alternatively, 'animus plugin install --path <binary>' copies a binary"
echo "into ~/.animus/plugins and writes its entry itself."
echo
echo "plugins:"
for dir in "${plugins[@]}"; do
	name=animus-$dir
	echo "  $name:"
	echo "    binary: $(yaml_path "$prefix/bin/$name")"
done
