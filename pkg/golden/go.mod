module github.com/animus-plugins/animus-plugins/pkg/golden

go 1.26.0

require (
	github.com/animus-plugins/animus-plugins/pkg/pluginkit v0.0.0
	golang.org/x/tools v0.52.0
)

replace github.com/animus-plugins/animus-plugins/pkg/pluginkit => ../pluginkit
