module github.com/animus-plugins/animus-plugins/e2e

go 1.26.0

require (
	github.com/animus-plugins/animus-plugins/e2e/fakeloki v0.0.0
	github.com/animus-plugins/animus-plugins/e2e/fakeslack v0.0.0
	github.com/animus-plugins/animus-plugins/pkg/golden v0.0.0
	github.com/animus-plugins/animus-plugins/pkg/pluginkit v0.0.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2
	golang.org/x/tools v0.52.0 // indirect
)

require (
	github.com/animus-plugins/animus-plugins/pkg/pgkit v0.0.0-00010101000000-000000000000
	github.com/jackc/pgx/v5 v5.13.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/kr/text v0.2.0 // indirect
	github.com/mattn/go-sqlite3 v1.14.53 // indirect
	github.com/rogpeppe/go-internal v1.16.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
)

require (
	github.com/animus-plugins/animus-plugins/pkg/sqlitex v0.0.0
	github.com/animus-plugins/animus-plugins/plugins/notifier-webhook v0.0.0
	github.com/coder/websocket v1.8.15 // indirect
	github.com/golang/snappy v1.0.0 // indirect
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/slack-go/slack v0.35.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/animus-plugins/animus-plugins/plugins/notifier-webhook => ../plugins/notifier-webhook

replace github.com/animus-plugins/animus-plugins/pkg/pluginkit => ../pkg/pluginkit

replace github.com/animus-plugins/animus-plugins/pkg/sqlitex => ../pkg/sqlitex

replace github.com/animus-plugins/animus-plugins/pkg/golden => ../pkg/golden

replace github.com/animus-plugins/animus-plugins/e2e/fakeloki => ./fakeloki

replace github.com/animus-plugins/animus-plugins/e2e/fakeslack => ./fakeslack

replace github.com/animus-plugins/animus-plugins/pkg/pgkit => ../pkg/pgkit
