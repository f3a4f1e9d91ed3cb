module github.com/animus-plugins/animus-plugins/e2e/fakeslack

go 1.26.0

require (
	github.com/gorilla/websocket v1.5.3
	github.com/slack-go/slack v0.35.0
)
