module github.com/animus-plugins/animus-plugins/e2e

go 1.26

require (
	github.com/animus-plugins/animus-plugins/pkg/pluginkit v0.0.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2
	golang.org/x/tools v0.52.0
)

require (
	github.com/BurntSushi/toml v1.6.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/animus-plugins/animus-plugins/pkg/sqlitex v0.0.0
	github.com/coder/websocket v1.8.15
	github.com/golang/snappy v1.0.0
	github.com/gorilla/websocket v1.5.3
	github.com/slack-go/slack v0.35.0
	golang.org/x/text v0.14.0 // indirect
	google.golang.org/protobuf v1.36.12
)

replace github.com/animus-plugins/animus-plugins/pkg/pluginkit => ../pkg/pluginkit

replace github.com/animus-plugins/animus-plugins/pkg/sqlitex => ../pkg/sqlitex
