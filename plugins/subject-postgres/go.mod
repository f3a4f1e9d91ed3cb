module github.com/animus-plugins/animus-plugins/plugins/subject-postgres

go 1.26.0

require (
	github.com/animus-plugins/animus-plugins/pkg/golden v0.0.0-00010101000000-000000000000
	github.com/animus-plugins/animus-plugins/pkg/pgkit v0.0.0
	github.com/animus-plugins/animus-plugins/pkg/pluginkit v0.0.0
	github.com/animus-plugins/animus-plugins/pkg/subjectkit v0.0.0
)

require (
	github.com/animus-plugins/animus-plugins/pkg/sqlitex v0.0.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/pgx/v5 v5.13.0 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/mattn/go-sqlite3 v1.14.53 // indirect
	github.com/oklog/ulid/v2 v2.1.2 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
)

replace (
	github.com/animus-plugins/animus-plugins/pkg/golden => ../../pkg/golden
	github.com/animus-plugins/animus-plugins/pkg/pgkit => ../../pkg/pgkit
	github.com/animus-plugins/animus-plugins/pkg/pluginkit => ../../pkg/pluginkit
	github.com/animus-plugins/animus-plugins/pkg/sqlitex => ../../pkg/sqlitex
	github.com/animus-plugins/animus-plugins/pkg/subjectkit => ../../pkg/subjectkit
)
