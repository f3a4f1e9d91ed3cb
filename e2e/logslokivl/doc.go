// Package logslokivl checks, against VictoriaLogs, that what
// animus-logs-loki pushes is what Loki's push API means: a second,
// independent implementation of that API reads the plugin's pushes, and
// the tests read the result back through VictoriaLogs' own LogsQL API
// (e2e/victorialogs), never through the plugin or e2e/fakeloki.
//
// For each push encoding the plugin offers, the plugin binary (spawned as
// the daemon does, through e2e/fakehost) stores daemon-, plugin-, cli- and
// workflow-shaped entries, and each stored row must show:
//
//   - the encoding: VictoriaLogs' per-format push counter moved by exactly
//     the number of store calls (one push per call), the other not at all;
//   - the stream labels service_name, source, level and LOKI_EXTRA_LABELS,
//     and nothing else, as the row's log stream (_stream);
//   - the structured metadata animus_id, target and source_name (when the
//     entry has one) as fields, and no other fields;
//   - _time equal to the entry's ts to the nanosecond;
//   - _msg: one compact JSON object that decodes to the stored LogEntry;
//   - X-Scope-OrgID: rows appear only under the tenant LOKI_TENANT_ID names.
//
// The harness itself is proven first by pushing the same mapping by hand,
// as JSON, gzip-compressed JSON and snappy protobuf (fakeloki.EncodeProtoPush),
// so a failure of the plugin tests is the plugin's.
//
// VictoriaLogs comes from VICTORIALOGS_URL (scripts/victorialogs.sh); the
// tests fail under CI=true without it and skip elsewhere with the reason.
// They do not run in parallel: the per-format counters are server-wide.
package logslokivl
