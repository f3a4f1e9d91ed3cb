module github.com/animus-plugins/animus-plugins/plugins/transport-http

go 1.26

require (
	github.com/animus-plugins/animus-plugins/pkg/pluginkit v0.0.0
	github.com/go-chi/chi/v5 v5.5.0
)

replace github.com/animus-plugins/animus-plugins/pkg/pluginkit => ../../pkg/pluginkit
