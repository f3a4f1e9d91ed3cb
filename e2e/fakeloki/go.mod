module github.com/animus-plugins/animus-plugins/e2e/fakeloki

go 1.26

require (
	github.com/coder/websocket v1.8.15
	github.com/golang/snappy v1.0.0
	google.golang.org/protobuf v1.36.12
)
