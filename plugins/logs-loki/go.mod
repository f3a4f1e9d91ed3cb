module github.com/animus-plugins/animus-plugins/plugins/logs-loki

go 1.26

require (
	github.com/animus-plugins/animus-plugins/pkg/pluginkit v0.0.0
	github.com/coder/websocket v1.8.15
	github.com/golang/snappy v1.0.0
	google.golang.org/protobuf v1.36.12
)

replace github.com/animus-plugins/animus-plugins/pkg/pluginkit => ../../pkg/pluginkit
