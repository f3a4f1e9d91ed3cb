package main

import (
	"bytes"
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
	"github.com/animus-plugins/animus-plugins/pkg/golden"
)

// TestGolden plays the plugin's golden conversations (e2e/golden/testdata)
// over pluginkit.Serve in process, against the same fake Loki the e2e run
// uses: the protocol layer without a built binary.
func TestGolden(t *testing.T) {
	golden.RunScripts(t, golden.ScriptDir("logs-loki"), newPlugin, golden.RunOptions{
		Vars: func(t *testing.T, script []byte) golden.Vars {
			if !bytes.Contains(script, []byte("${FAKELOKI_URL}")) {
				return nil
			}
			return golden.Vars{"FAKELOKI_URL": fakeloki.New(t, fakeloki.Options{}).URL()}
		},
	})
}
