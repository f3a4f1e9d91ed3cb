module github.com/animus-plugins/animus-plugins/pkg/durablekit

go 1.26.0

require (
	github.com/animus-plugins/animus-plugins/pkg/pluginkit v0.0.0
	github.com/animus-plugins/animus-plugins/pkg/sqlitex v0.0.0
)

require github.com/mattn/go-sqlite3 v1.14.53 // indirect

replace (
	github.com/animus-plugins/animus-plugins/pkg/pluginkit => ../pluginkit
	github.com/animus-plugins/animus-plugins/pkg/sqlitex => ../sqlitex
)
