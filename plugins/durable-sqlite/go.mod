module github.com/animus-plugins/animus-plugins/plugins/durable-sqlite

go 1.26.0

require (
	github.com/animus-plugins/animus-plugins/pkg/golden v0.0.0
	github.com/animus-plugins/animus-plugins/pkg/pluginkit v0.0.0
)

require github.com/animus-plugins/animus-plugins/pkg/sqlitex v0.0.0 // indirect

require (
	github.com/animus-plugins/animus-plugins/pkg/durablekit v0.0.0
	github.com/mattn/go-sqlite3 v1.14.53 // indirect
	golang.org/x/tools v0.52.0 // indirect
)

replace (
	github.com/animus-plugins/animus-plugins/pkg/pluginkit => ../../pkg/pluginkit
	github.com/animus-plugins/animus-plugins/pkg/sqlitex => ../../pkg/sqlitex
)

replace github.com/animus-plugins/animus-plugins/pkg/golden => ../../pkg/golden

replace github.com/animus-plugins/animus-plugins/pkg/durablekit => ../../pkg/durablekit

replace github.com/animus-plugins/animus-plugins/pkg/pgkit => ../../pkg/pgkit
