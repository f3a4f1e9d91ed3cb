module github.com/animus-plugins/animus-plugins/examples/animus-example

go 1.26.0

require (
	github.com/animus-plugins/animus-plugins/pkg/golden v0.0.0
	github.com/animus-plugins/animus-plugins/pkg/pluginkit v0.0.0
)

require golang.org/x/tools v0.52.0 // indirect

replace github.com/animus-plugins/animus-plugins/pkg/pluginkit => ../../pkg/pluginkit

replace github.com/animus-plugins/animus-plugins/pkg/golden => ../../pkg/golden
