#!/bin/sh
# Entrypoint of the animus-plugins image (installed as animus-plugins-info).
#
# The plugins are spawned by the Animus daemon, never run as services, so
# with no arguments this only lists what the image holds: each plugin's
# name, version and kind from its own --manifest (probed, as the daemon
# does, with an empty environment). With arguments it runs them instead,
# e.g. `docker run IMAGE animus-queue-sqlite --manifest`.
set -eu

if [ "$#" -gt 0 ]; then
	exec "$@"
fi

field() { # field NAME JSON: a top-level string field before "capabilities"
	# (cut there so env_required's own "name" keys cannot match).
	printf '%s' "$2" | sed 's/,"capabilities".*//' | sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p"
}

dir=${ANIMUS_PLUGINS_DIR:-/usr/local/bin}
found=0
status=0
entries=
echo "Animus plugins in $dir (spawned by the daemon; register each in plugins.yaml):"
for bin in "$dir"/animus-*; do
	[ -x "$bin" ] || continue
	[ "$bin" = "$dir/animus-plugins-info" ] && continue
	found=$((found + 1))
	if manifest=$(env -i PATH="$PATH" "$bin" --manifest </dev/null 2>/dev/null); then
		printf '  %-26s %-14s %-20s %s\n' "$(field name "$manifest")" "$(field version "$manifest")" \
			"$(field plugin_kind "$manifest")" "$bin"
		entries="$entries  $(field name "$manifest"):
    binary: $bin
"
	else
		printf '  %-26s manifest probe FAILED\n' "$(basename "$bin")"
		status=1
	fi
done
if [ "$found" -eq 0 ]; then
	echo "  (none found)"
	exit 1
fi
echo
echo "plugins.yaml entries (e.g. ~/.animus/plugins.yaml):"
echo "plugins:"
printf '%s' "$entries"
exit "$status"
