module github.com/animus-plugins/animus-plugins/plugins/subject-sqlite

go 1.26.0

require (
	github.com/animus-plugins/animus-plugins/pkg/golden v0.0.0
	github.com/animus-plugins/animus-plugins/pkg/pluginkit v0.0.0
	github.com/animus-plugins/animus-plugins/pkg/subjectkit v0.0.0
	github.com/mattn/go-sqlite3 v1.14.53
	github.com/oklog/ulid/v2 v2.1.2
)

require (
	github.com/animus-plugins/animus-plugins/pkg/sqlitex v0.0.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
)

replace (
	github.com/animus-plugins/animus-plugins/pkg/golden => ../../pkg/golden
	github.com/animus-plugins/animus-plugins/pkg/pgkit => ../../pkg/pgkit
	github.com/animus-plugins/animus-plugins/pkg/pluginkit => ../../pkg/pluginkit
	github.com/animus-plugins/animus-plugins/pkg/sqlitex => ../../pkg/sqlitex
	github.com/animus-plugins/animus-plugins/pkg/subjectkit => ../../pkg/subjectkit
)
