module github.com/animus-plugins/animus-plugins/e2e

go 1.26

require (
	github.com/animus-plugins/animus-plugins/pkg/pluginkit v0.0.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2
)

require golang.org/x/text v0.14.0 // indirect

replace github.com/animus-plugins/animus-plugins/pkg/pluginkit => ../pkg/pluginkit
