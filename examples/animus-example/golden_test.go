package main

import (
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/golden"
)

// TestGolden plays the plugin's golden conversations (e2e/golden/testdata)
// over pluginkit.Serve in process: the protocol layer without a built
// binary.
func TestGolden(t *testing.T) {
	golden.RunScripts(t, golden.ScriptDir("example"), newPlugin, golden.RunOptions{})
}
