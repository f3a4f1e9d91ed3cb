module github.com/animus-plugins/animus-plugins/plugins/subject-sqlite

go 1.26

require (
	github.com/animus-plugins/animus-plugins/pkg/pluginkit v0.0.0
	github.com/animus-plugins/animus-plugins/pkg/sqlitex v0.0.0
)

replace (
	github.com/animus-plugins/animus-plugins/pkg/pluginkit => ../../pkg/pluginkit
	github.com/animus-plugins/animus-plugins/pkg/sqlitex => ../../pkg/sqlitex
)
