package queuepostgres

import "github.com/animus-plugins/animus-plugins/e2e/internal/pgns"

// The plugin under test and its SQLite sibling.
var binaryName = pgns.Queue.Binary

const sqliteName = "animus-queue-sqlite"
