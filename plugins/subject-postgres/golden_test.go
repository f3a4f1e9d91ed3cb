package main

import (
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/golden"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
)

// TestGolden plays animus-subject-sqlite's golden conversations
// (e2e/golden/testdata/subject-sqlite), unchanged, over pluginkit.Serve in
// process: the two plugins serve one wire surface, so the answers must be
// the same but for the plugin's name and description (golden.Equivalent).
// Each script gets a fresh namespace, as each gets a fresh database file
// on SQLite.
func TestGolden(t *testing.T) {
	dsn := pgtest.DSN(t)
	golden.RunScripts(t, golden.ScriptDir("subject-sqlite"), newPlugin, golden.RunOptions{
		Env: func(t *testing.T) map[string]string {
			return map[string]string{"ANIMUS_SUBJECT_PG_DSN": dsn, "ANIMUS_SUBJECT_PG_SCHEMA": pgtest.Schema(t, dsn)}
		},
		Equivalent: golden.Equivalent,
	})
}
