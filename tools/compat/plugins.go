package compat

import (
	"context"
	"fmt"
	"os"

	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
	"github.com/animus-plugins/animus-plugins/e2e/fakeslack"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/scratch"
)

// Plugin is one row of the matrix: a directory under plugins/ and how to
// drive its binary bin/animus-<Dir>.
type Plugin struct {
	Dir  string // plugins/<Dir>; the binary is animus-<Dir>
	Kind string // the plugin_kind its manifest must declare
	// Preset is the handshake of the daemon caller that really spawns this
	// kind (host-and-lifecycle.md §6): the kind clients send
	// project_binding, the generic host does not.
	Preset fakehost.Preset
	// Ladder is how that caller stops it (transports get
	// transport/shutdown first, host-and-lifecycle.md §8).
	Ladder fakehost.Ladder
	// Upstream starts the local fakes the binary needs to pass its
	// conformance suite and returns the daemon-side environment pointing
	// at them; nil when it needs none. The same set-up as the plugin's
	// e2e TestConformance, so the matrix reports what CI proves.
	Upstream func(ctx context.Context) (env map[string]string, stop func(), err error)
	// UpstreamNote says in the matrix what Upstream provides.
	UpstreamNote string
	// Isolate, when set, gives every conformance scenario a store of its
	// own (conformance.Options.Isolate) in what Upstream's env points at:
	// for a plugin keyed by a database namespace rather than the bound
	// project root, as the plugin's e2e TestConformance does.
	Isolate func(env map[string]string) conformance.IsolateFunc
	// Unreachable is conformance.Options.Unreachable: the environment
	// overlay that points the plugin's store at nothing, for the
	// backend-unavailable scenarios.
	Unreachable map[string]string
}

// Binary is the file name of the plugin's binary.
func (p Plugin) Binary() string { return "animus-" + p.Dir }

// Name is the manifest name the binary is expected to report.
func (p Plugin) Name() string { return p.Binary() }

// Plugins lists the plugins in the order of the root README's table.
// A test fails when a directory under plugins/ is missing here.
func Plugins() []Plugin {
	return []Plugin{
		{Dir: "subject-sqlite", Kind: "subject_backend", Preset: fakehost.PresetDaemon, Ladder: fakehost.LadderDaemon},
		pgPlugin(Plugin{Dir: "subject-postgres", Kind: "subject_backend", Preset: fakehost.PresetDaemon, Ladder: fakehost.LadderDaemon}, "ANIMUS_SUBJECT_PG", false),
		{Dir: "queue-sqlite", Kind: "queue", Preset: fakehost.PresetQueueClient, Ladder: fakehost.LadderDaemon},
		pgPlugin(Plugin{Dir: "queue-postgres", Kind: "queue", Preset: fakehost.PresetQueueClient, Ladder: fakehost.LadderDaemon}, "ANIMUS_QUEUE_PG", false),
		{Dir: "durable-sqlite", Kind: "durable_store", Preset: fakehost.PresetDurableClient, Ladder: fakehost.LadderDaemon},
		pgPlugin(Plugin{Dir: "durable-postgres", Kind: "durable_store", Preset: fakehost.PresetDurableClient, Ladder: fakehost.LadderDaemon}, "ANIMUS_DURABLE_PG", true),
		{Dir: "notifier-webhook", Kind: "notifier", Preset: fakehost.PresetNotifier, Ladder: fakehost.LadderDaemon,
			UpstreamNote: "its suite starts its own 127.0.0.1 webhook receiver"},
		{Dir: "trigger-slack", Kind: "trigger_backend", Preset: fakehost.PresetDaemon, Ladder: fakehost.LadderDaemon,
			Upstream: slackUpstream, UpstreamNote: "Socket Mode against e2e/fakeslack with one mention waiting for every connection"},
		{Dir: "logs-loki", Kind: "log_storage_backend", Preset: fakehost.PresetDaemon, Ladder: fakehost.LadderDaemon,
			Upstream: lokiUpstream, UpstreamNote: "LOKI_URL pointing at e2e/fakeloki"},
		{Dir: "transport-http", Kind: "transport_backend", Preset: fakehost.PresetDaemon, Ladder: fakehost.LadderTransport,
			UpstreamNote: "its suite starts e2e/fakedaemon's control socket itself"},
	}
}

// Trigger ids the Slack set-up configures (as e2e/triggerslack does).
const (
	slackTriggerID   = "slack-incoming"
	slackTriggerIDDM = "slack-dm"
)

// slackUpstream mirrors e2e/triggerslack's TestConformance: a fake Slack
// that greets every new Socket Mode connection with one app mention, so
// the testkit's watch-fires-event sees an event within its 3 s.
func slackUpstream(context.Context) (map[string]string, func(), error) {
	fake := fakeslack.Start(fakeslack.Options{
		Greeting: [][]byte{fakeslack.EventsAPI("env-greeting", 0, fakeslack.Callback("T0FAKE", "EvGreeting",
			fakeslack.Mention("C1", "U1", "<@U0BOT> conformance", "1715701234.999999")))},
	})
	env := fake.Env()
	env["SLACK_TRIGGER_ID"] = slackTriggerID
	env["SLACK_TRIGGER_ID_DM"] = slackTriggerIDDM
	return env, fake.Close, nil
}

// lokiUpstream starts a fake Loki with Loki's defaults; the plugin reads
// LOKI_URL from its environment (logs-loki.md §6.1).
func lokiUpstream(context.Context) (map[string]string, func(), error) {
	fake, err := fakeloki.Start(fakeloki.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("fake loki: %w", err)
	}
	return map[string]string{"LOKI_URL": fake.URL()}, fake.Close, nil
}

// envPGTestDSN is the cluster scripts/postgres.sh run exports (the
// variable pkg/pgkit/pgtest reads; not imported, to keep package testing
// out of the command).
const envPGTestDSN = "ANIMUS_PG_TEST_DSN"

// pgPlugin completes the row of a PostgreSQL plugin whose settings are
// <prefix>_DSN, _SCHEMA and _CONNECT_TIMEOUT_MS, as its e2e package's
// TestConformance sets it up: the database of $ANIMUS_PG_TEST_DSN with a
// schema of its own for the probe and the handshakes, and a fresh schema
// per scenario (the data is keyed by the namespace, not the project root).
// Without a cluster the row cannot be measured, and says how to get one:
// `make compat` and the staleness test must run under scripts/postgres.sh
// run (make e2e does). unreachable adds the overlay for the
// backend-unavailable scenarios: a loopback port nothing listens on.
func pgPlugin(p Plugin, prefix string, unreachable bool) Plugin {
	dsnVar, schemaVar := prefix+"_DSN", prefix+"_SCHEMA"
	p.Upstream = func(context.Context) (map[string]string, func(), error) {
		return pgUpstream(p.Binary(), dsnVar, schemaVar)
	}
	p.Isolate = func(env map[string]string) conformance.IsolateFunc { return pgIsolate(env[dsnVar], schemaVar) }
	p.UpstreamNote = "the PostgreSQL cluster `scripts/postgres.sh run` provides (`" + envPGTestDSN + "`), a fresh schema (`" + schemaVar + "`) per scenario"
	if unreachable {
		p.Unreachable = map[string]string{
			dsnVar:                         "postgres://animus@127.0.0.1:1/animus?sslmode=disable",
			prefix + "_CONNECT_TIMEOUT_MS": "1000",
		}
	}
	return p
}

// pgUpstream is the environment of a PostgreSQL plugin (binary) whose
// variables are dsnVar and schemaVar: $ANIMUS_PG_TEST_DSN and a fresh
// schema, dropped at stop.
func pgUpstream(binary, dsnVar, schemaVar string) (map[string]string, func(), error) {
	dsn := os.Getenv(envPGTestDSN)
	if dsn == "" {
		return nil, nil, fmt.Errorf("%s needs PostgreSQL: no $%s; run under `scripts/postgres.sh run -- …` (e.g. scripts/postgres.sh run -- make compat)", binary, envPGTestDSN)
	}
	env := map[string]string{dsnVar: dsn}
	schema, drop, err := freshSchema(dsn)
	if err != nil {
		return nil, nil, err
	}
	env[schemaVar] = schema
	return env, drop, nil
}

// pgIsolate gives each scenario a fresh schema (schemaVar) in dsn's
// database.
func pgIsolate(dsn, schemaVar string) conformance.IsolateFunc {
	return func() (map[string]string, func(), error) {
		schema, drop, err := freshSchema(dsn)
		if err != nil {
			return nil, nil, err
		}
		return map[string]string{schemaVar: schema}, drop, nil
	}
}

// freshSchema creates an empty schema compat_<16 hex digits> (the plugin
// would create it on first use too; creating it here proves the database
// answers) and returns the function that drops it.
func freshSchema(dsn string) (string, func(), error) {
	name, drop, err := scratch.NewSchema(context.Background(), dsn, "compat")
	if err != nil {
		return "", nil, fmt.Errorf("PostgreSQL at $%s: %w", envPGTestDSN, err)
	}
	return name, func() { _ = drop() }, nil
}
