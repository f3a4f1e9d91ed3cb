module github.com/animus-plugins/animus-plugins/tools

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/animus-plugins/animus-plugins/e2e v0.0.0
	github.com/animus-plugins/animus-plugins/e2e/fakeloki v0.0.0
	github.com/animus-plugins/animus-plugins/e2e/fakeslack v0.0.0
	github.com/animus-plugins/animus-plugins/pkg/pgkit v0.0.0
	github.com/animus-plugins/animus-plugins/plugins/notifier-webhook v0.0.0
)

require (
	github.com/animus-plugins/animus-plugins/pkg/pluginkit v0.0.0 // indirect
	github.com/coder/websocket v1.8.15 // indirect
	github.com/golang/snappy v1.0.0 // indirect
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/pgx/v5 v5.13.0 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2 // indirect
	github.com/slack-go/slack v0.35.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace (
	github.com/animus-plugins/animus-plugins/e2e => ../e2e
	github.com/animus-plugins/animus-plugins/e2e/fakeloki => ../e2e/fakeloki
	github.com/animus-plugins/animus-plugins/e2e/fakeslack => ../e2e/fakeslack
	github.com/animus-plugins/animus-plugins/pkg/golden => ../pkg/golden
	github.com/animus-plugins/animus-plugins/pkg/pgkit => ../pkg/pgkit
	github.com/animus-plugins/animus-plugins/pkg/pluginkit => ../pkg/pluginkit
	github.com/animus-plugins/animus-plugins/pkg/sqlitex => ../pkg/sqlitex
	github.com/animus-plugins/animus-plugins/plugins/notifier-webhook => ../plugins/notifier-webhook
)
