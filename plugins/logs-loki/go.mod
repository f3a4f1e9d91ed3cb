module github.com/animus-plugins/animus-plugins/plugins/logs-loki

go 1.26.0

require (
	github.com/animus-plugins/animus-plugins/e2e/fakeloki v0.0.0
	github.com/animus-plugins/animus-plugins/pkg/golden v0.0.0
	github.com/animus-plugins/animus-plugins/pkg/pluginkit v0.0.0
	github.com/coder/websocket v1.8.15
	github.com/golang/snappy v1.0.0
	google.golang.org/protobuf v1.36.12
)

require golang.org/x/tools v0.52.0 // indirect

replace github.com/animus-plugins/animus-plugins/pkg/pluginkit => ../../pkg/pluginkit

replace github.com/animus-plugins/animus-plugins/pkg/golden => ../../pkg/golden

replace github.com/animus-plugins/animus-plugins/e2e/fakeloki => ../../e2e/fakeloki
