module github.com/animus-plugins/animus-plugins/plugins/trigger-slack

go 1.26

require (
	github.com/animus-plugins/animus-plugins/pkg/pluginkit v0.0.0
	github.com/animus-plugins/animus-plugins/pkg/sqlitex v0.0.0
	github.com/gorilla/websocket v1.5.3
	github.com/slack-go/slack v0.35.0
)

require github.com/mattn/go-sqlite3 v1.14.53 // indirect

replace (
	github.com/animus-plugins/animus-plugins/pkg/pluginkit => ../../pkg/pluginkit
	github.com/animus-plugins/animus-plugins/pkg/sqlitex => ../../pkg/sqlitex
)
