package golden

import "regexp"

// The plugin_info fields that name a plugin rather than describe its
// behaviour: the only ones in which two binaries serving one wire surface
// (animus-queue-sqlite and animus-queue-postgres run the same queue
// semantics over different stores) may answer a script differently. A
// description may hold escaped quotes; plugin_info holds no nested
// object.
var (
	pluginName        = regexp.MustCompile(`"plugin_info":\{"name":"(?:[^"\\]|\\.)*"`)
	pluginDescription = regexp.MustCompile(`("plugin_info":\{[^{}]*"description":)"(?:[^"\\]|\\.)*"`)
)

// Equivalent rewrites normalised frames (a golden section, or what a run
// returned) for comparison across the plugins that play one directory's
// scripts: plugin_info.name becomes <PLUGIN-NAME> and
// plugin_info.description <PLUGIN-DESCRIPTION>, wherever plugin_info
// appears. Nothing else changes: any other difference is a difference in
// behaviour, to be fixed, not normalised away.
func Equivalent(frames []byte) []byte {
	frames = pluginName.ReplaceAll(frames, []byte(`"plugin_info":{"name":"<PLUGIN-NAME>"`))
	return pluginDescription.ReplaceAll(frames, []byte(`${1}"<PLUGIN-DESCRIPTION>"`))
}
