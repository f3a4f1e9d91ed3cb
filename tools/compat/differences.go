package compat

// Difference is one known way a plugin differs from the reference Rust
// plugin of its kind, and why.
type Difference struct {
	Plugin string // directory under plugins/
	// Source is where the difference is documented: SourceREADME for the
	// differences section of plugins/<Plugin>/README.md, otherwise a file
	// of shared/reference/ and its section ("logs-loki.md §4").
	Source string
	// Match is text copied verbatim from the source. For SourceREADME it
	// must occur in exactly one bullet or table row of the README's
	// differences section, and every such item must be matched by an
	// entry (TestDifferencesCoverREADMEs); for a reference note it must
	// occur in that file.
	Match      string
	Difference string
	Reason     string
}

// SourceREADME marks entries harvested from a plugin README.
const SourceREADME = "README"

// Differences returns the maintained table, plugin by plugin in the order
// of Plugins. Edit it together with the README it cites: the tests fail
// when a README's differences section gains an item with no entry, when an
// entry's Match no longer occurs, and when a plugin has no entry at all.
func Differences() []Difference {
	var out []Difference
	for _, group := range [][]Difference{
		subjectDifferences(), subjectPostgresDifferences(), queueDifferences(), queuePostgresDifferences(), durableDifferences(), durablePostgresDifferences(),
		notifierDifferences(), triggerDifferences(), lokiDifferences(), transportDifferences(),
	} {
		out = append(out, group...)
	}
	return out
}

// DifferencesOf returns the entries of one plugin, in table order.
func DifferencesOf(dir string) []Difference {
	var out []Difference
	for _, d := range Differences() {
		if d.Plugin == dir {
			out = append(out, d)
		}
	}
	return out
}

// The SQLite plugins' differences from their references: the Rust
// animus-subject-sqlite, animus-queue-default 0.3.2/0.3.3 and, for the
// durable store (which has no reference implementation), the crate's
// documented contract.

func subjectDifferences() []Difference {
	const p = "subject-sqlite"
	return []Difference{
		{p, SourceREADME, "`create`, `delete`, `status`, `next` over the wire",
			"`create`, `delete`, `status` and `next` are served over the wire; the reference answers `-32601`",
			"the daemon control surface and the CLI send them (subject.md §3.2); the reference's `create` is a Rust-only method, so its `supports_create: true` was false on the wire (subject.md §0)"},
		{p, SourceREADME, "| ids |",
			"ids are `<kind>:<ULID>`, and bare and `sqlite:` ids are accepted; the reference issues `sqlite:<ULID>`",
			"the daemon routes an id by the text before its first colon, and `sqlite` is a kind no plugin serves; the runner sends bare ids (subject.md §2.2)"},
		{p, SourceREADME, "`{filter: …}` list params",
			"wrapped `{filter: …}` list params are honoured; the reference silently lists everything",
			"the daemon control surface sends the wrapped shape and the CLI the bare one (subject.md §2.1)"},
		{p, SourceREADME, "| filters |",
			"every filter runs in SQL, pages are exact, dispatch labels come from the hints; the reference filters labels and attachments after paging and ignores `dispatch_label`",
			"filtering after paging returns short pages, and ignoring `dispatch_label` over-matches what the daemon dispatches (subject.md §0, §7.6)"},
		{p, SourceREADME, "| watch |",
			"watch is cross-process, in commit order, filtered, with `unwatch`; the reference's is in-process, lossy and unordered",
			"the daemon, the CLI and the runner each spawn their own process on one file, so an in-process broadcast never sees the others' writes (subject.md §0)"},
		{p, SourceREADME, "| concurrent updates |",
			"each update is one `BEGIN IMMEDIATE` transaction; the reference reads then writes without one",
			"concurrent updates from several processes lost writes in the reference (subject.md §0)"},
		{p, SourceREADME, "| two processes starting |",
			"processes that start together all come up; the reference's second one fails on the migration row",
			"the daemon, CLI and runner start processes on the same file at the same time (subject.md §0)"},
		{p, SourceREADME, "| `comment` |",
			"`comment` is appended to a comment log; the reference overwrites the description with it",
			"overwriting the description loses the subject's body (subject.md §0)"},
		{p, SourceREADME, "| `children`, `url` |",
			"`children` is computed from parents and `url` is stored; the reference never fills them",
			"both are fields of the wire `Subject` that callers read (subject.md §0)"},
		{p, SourceREADME, "| manifest kinds |",
			"the manifest's kinds follow `ANIMUS_SQLITE_KINDS`; the reference hard-codes `task`",
			"the daemon routes by the manifest's `subject_kind:` entries, and `task` collides with animus-subject-default (subject.md §0; README, kind collisions)"},
		{p, "subject.md §7.6", "| Missing indexes |",
			"composite and timestamp indexes back every list filter and `next`; the reference has only single-column ones",
			"lists stay fast at 100k subjects (README, Performance)"},
		{p, "subject.md §7.6", "| Answers notifications |",
			"notifications (`subject/unwatch`, `$/cancelRequest`, `initialized`) are never answered; the reference answers them",
			"a reply to a notification is a protocol violation the host may choke on (spec §2.2)"},
		{p, "subject.md §7.6", "| Sloppy error categories |",
			"errors carry the right code and `data.category` (`not_found`, `invalid_request`, `unavailable`)",
			"the daemon and the runner branch on codes and categories: only `-32601` moves the runner's fallback on (subject.md §3.2, §3.4)"},
	}
}

// queuePostgresDifferences: animus-queue-postgres answers exactly as
// animus-queue-sqlite does (e2e/queuepostgres TestParity, e2e/golden), so
// its differences from the references are queue-sqlite's; what sets it
// apart from the Postgres reference is listed here.
func queuePostgresDifferences() []Difference {
	const p = "queue-postgres"
	return []Difference{
		{p, "queue.md §1.4", "[pg]: ignores the binding (store keyed by `DATABASE_URL`).",
			"the queue is keyed by the namespace `ANIMUS_QUEUE_PG_SCHEMA` in the database `ANIMUS_QUEUE_PG_DSN` names, not by the project root; like animus-queue-sqlite, a process initialised without `project_binding` answers `-32207` to every queue method",
			"daemons on several machines share one queue through the namespace, and the wire answers stay animus-queue-sqlite's so that either binary can serve a daemon"},
	}
}

func queueDifferences() []Difference {
	const p = "queue-sqlite"
	return []Difference{
		{p, SourceREADME, "**Multi-process safe.**",
			"any number of processes may use one project's queue at once; the file reference serialises on one lock file and calls concurrent instances undefined",
			"the daemon spawns a process per queue call while the CLI and the completion reconcilers run beside it (queue.md §0, §5.1)"},
		{p, SourceREADME, "**Per-batch subject exclusivity always applies**",
			"a lease never hands out two entries of one subject in a batch, with or without `exclude_subjects`",
			"the Postgres reference behaves this way, and every daemon version copes with both behaviours"},
		{p, SourceREADME, "**`-32205`** on a busy timeout",
			"a lock held past the busy timeout answers `-32205`; the file reference blocks forever",
			"a blocked call would stall the daemon's dispatch tick; an error lets the caller retry on its next tick"},
		{p, SourceREADME, "**Unbound `initialize` succeeds**",
			"`initialize` without `project_binding` succeeds and the queue methods then answer `-32207`; the file reference fails `initialize`",
			"generic handshakes and health probes send no binding and must still work (host-and-lifecycle.md §6)"},
		{p, SourceREADME, "**Huge `expire_after_secs`**",
			"an `expire_after_secs` beyond 2^63-1 never expires; the file reference wraps or panics",
			"an overflow must not turn a long expiry into an immediate one or crash the process"},
		{p, SourceREADME, "**Audit trail and `inspect`**",
			"an audit trail, the `inspect` command and opt-in lease expiry are added",
			"operators need to see why an entry moved; expiry is opt-in so the default keeps the 0.3.2 semantics"},
		{p, SourceREADME, "**Error frames** carry `data.category`",
			"every error carries `data.category` (`-32203` also `data.actual_state`); runtime messages for `-32000`, `-32601`, `-32602` and storage failures differ from the reference's",
			"hosts branch on the category; storage messages never include SQL or paths"},
		{p, SourceREADME, "`capabilities.cancellation` is `true`",
			"`capabilities.cancellation` is `true`",
			"`$/cancelRequest` is honoured and rolls the transaction back, so the flag is truthful"},
		{p, SourceREADME, "**`queue/list` paging follows the host**",
			"`queue/list` is unlimited for 0.6 hosts and 500 by default (1..2000) for 0.7 hosts",
			"0.6 callers rely on 0.3.2's unlimited list; the 0.7 CLI lists one page and relies on the 0.4.0 default (queue-v2.md §3.10, §4.6)"},
		// animus-queue-default v0.4.0, the queue/v2 surface.
		{p, SourceREADME, "**No host guard**",
			"0.6 hosts are served (0.3.2 surface and paging); animus-queue-default v0.4.0 refuses them with `-32602`",
			"operators move between the 0.6 and 0.7 lines with one binary and one database"},
		{p, SourceREADME, "**Reply `protocol_version` `1.1.0`**",
			"`initialize` replies protocol `1.1.0`; animus-queue-default v0.4.0 replies `1.2.0`",
			"hosts accept any minor of major 1 (animus-0.7.md §0), and the 0.6 line announces 1.0.0 and 1.1.0"},
		{p, SourceREADME, "**Multi-process safe** on one file",
			"v2 is multi-process safe on one SQLite file, with transactions instead of the reference's history line before a file replace; finished rows are kept",
			"the 0.7 daemon still spawns one process per queue call (queue-v2.md §4.1), and idempotency replays and `already_applied` need the finished rows"},
		{p, SourceREADME, "**Field names in fence validation messages**",
			"fence validation messages name nested fields by dotted path (`queue_lease.owner_id must not be empty`)",
			"the crate's exact field wording there is not known; the path says which nested field failed"},
		{p, SourceREADME, "**Recover with a zero `ttl_secs`**",
			"`queue/v2/lease/recover` with `ttl_secs: 0` answers the crate's renew wording",
			"the crate's recover message for it is not known; the renew rule is the same rule"},
		{p, SourceREADME, "**Old-style duplicate warnings**",
			"old-style duplicate warnings count old-style entries only, and old-style `queue/enqueue` without a subject keeps the 0.3.2 error",
			"as the reference, whose ticketed entries carry another key; a 0.6 daemon sees 0.3.2 unchanged"},
		{p, SourceREADME, "`ANIMUS_QUEUE_LEASE_TTL_SECS` also drives",
			"`ANIMUS_QUEUE_LEASE_TTL_SECS` also drives an opt-in old-style reclaim, by age since the lease, which the reference does not have",
			"entries leased by a crashed process must be reclaimable once an operator turns the setting on, whoever leased them"},
	}
}

// subjectPostgresDifferences: animus-subject-postgres answers exactly as
// animus-subject-sqlite does (e2e/golden, e2e/subjectpostgres), so its
// differences from the reference are subject-sqlite's; what sets it apart
// from the reference note is listed here.
func subjectPostgresDifferences() []Difference {
	const p = "subject-postgres"
	return []Difference{
		{p, "subject.md §0", "Rust watch is in-process only",
			"a watch sees every change committed by any process on any host sharing `ANIMUS_SUBJECT_PG_SCHEMA`, in commit order, woken by LISTEN/NOTIFY and read from a durable change log (a dropped connection delays events, never loses or repeats one)",
			"the point of the plugin is one task list for daemons on several machines; the reference's broadcast channel never sees another process's writes"},
	}
}

// durablePostgresDifferences: animus-durable-postgres answers exactly as
// animus-durable-sqlite does (e2e/durablepostgres TestParity, e2e/golden),
// so its differences from the crate's contract are durable-sqlite's; what
// sets it apart from the reference note's recommendation is listed here.
func durablePostgresDifferences() []Difference {
	const p = "durable-postgres"
	return []Difference{
		{p, "durable.md §1", "file at `<project_root>/.animus/durable.sqlite`",
			"the step log is the namespace `ANIMUS_DURABLE_PG_SCHEMA` in the database `ANIMUS_DURABLE_PG_DSN` names, not a file under the project root; the binding is still required and checked (`-32305` per call without one), but it is not the key",
			"a workflow begun on one host is recovered (`recover_in_flight`) on another, where the same project has another root; the wire answers stay animus-durable-sqlite's so that either binary can serve the runner"},
	}
}

func durableDifferences() []Difference {
	const p = "durable-sqlite"
	return []Difference{
		{p, SourceREADME, "A missing binding is answered per call (`-32305`)",
			"without `project_binding`, `initialize` succeeds and each call answers `-32305`",
			"generic handshakes and health probes send no binding and must still work; there is no reference implementation, only the crate's contract"},
		{p, SourceREADME, "Expired but not superseded reservations commit",
			"an expired reservation nobody took over still commits; abandoning an unknown step answers `{\"ack\":false}`; committing an abandoned step is `-32302`",
			"the step's side effect happened, so recording it is the truthful outcome (durable.md §6, D3/D4)"},
		{p, SourceREADME, "`query_run.status` is always `pending`",
			"`query_run.status` is always `pending`",
			"no method of protocol 0.1.0 ends a run (durable.md §6, D5)"},
		{p, SourceREADME, "Dedupe is by the key alone",
			"dedupe is by idempotency key alone; a key reused for another step is `-32306`, also after the commit",
			"the key names the side effect, so reuse for another step is a caller bug that must not return someone else's output (durable.md §6, D6)"},
		{p, SourceREADME, "`begin_workflow_run` on an existing run",
			"`begin_workflow_run` on an existing run takes a new epoch and keeps its commits and first inputs",
			"a restarted phase must fence the old owner without losing committed steps (durable.md §6, D7)"},
		{p, SourceREADME, "Requests are served one at a time in arrival order",
			"requests are served one at a time, in arrival order, per process",
			"a pipelining host sees its calls applied in order; concurrency between callers is between processes, which SQLite serialises"},
		{p, SourceREADME, "Limits the crate does not state",
			"ids and names are 1–1024 bytes, `payload` and `inputs` are held to `max_payload_bytes`, long abandon reasons are cut, StepError objects are normalised",
			"`query_run` returns every output in one reply and the daemon's reader gives up at 8 MiB (NOTES.md); normalising matches what the Rust types would store"},
	}
}
