// Package fakeloki is an in-memory stand-in for Grafana Loki's HTTP API,
// for tests, benchmarks and the demo. It serves on 127.0.0.1 (httptest)
// and implements a documented subset of Loki 3 behaviour: what the Loki
// log-storage plugin sends and reads, with Loki's defaults, limits and
// error wording where they are observable to a client.
//
// # Endpoints
//
//   - POST /loki/api/v1/push: Content-Type application/json
//     ({"streams":[{"stream":{…},"values":[["<ns>","<line>"(,{sm})]]}]},
//     optionally Content-Encoding: gzip) or anything else as
//     snappy-block-compressed protobuf logproto.PushRequest (streams{labels
//     string, entries{timestamp, line, structuredMetadata{name,value}}}),
//     decoded by hand with protowire. EncodeProtoPush builds such bodies.
//     204 on success.
//   - GET|POST /loki/api/v1/query_range: log queries only (resultType
//     "streams"); query, start, end, since, limit (default 100), direction
//     (default backward).
//   - GET /loki/api/v1/tail: websocket; query, start (default now−1h),
//     delay_for (0–5 s), limit (default 100).
//   - GET /loki/api/v1/labels: stream label names of the tenant.
//   - GET /ready: 200 "ready".
//
// # Push rules
//
// Per stream: at least one label ("error at least one label pair is
// required per stream"), names matching [a-zA-Z_][a-zA-Z0-9_]*, at most
// MaxLabelNames (15) names, name ≤ 1024 and value ≤ 2048 bytes. Per entry:
// line ≤ MaxLineSize (256 KiB), timestamp not older than 168h nor more
// than 10m ahead of Now, and either unordered writes with a 1h "entry too
// far behind" window (default) or OrderedWrites ("entry out of order").
// An exact duplicate (same stream, timestamp and line) is accepted and
// dropped. Like Loki, a push is not transactional: valid entries are kept,
// and if any entry was rejected the answer is 400 with one message per
// rejection (at most 10) and "user '<tenant>', total ignored: N out of M".
// With DisallowStructuredMetadata an entry carrying structured metadata
// is rejected (allow_structured_metadata: false).
// Without a service_name label, one is added as Loki 3 does (from
// service, app, application, name, …, job, else "unknown_service");
// DisableServiceNameDiscovery turns that off.
//
// # LogQL subset
//
//   - stream selector {a="b", c=~"re", d!="x", e!~"re"}; at least one
//     matcher must not match the empty string (Loki's error otherwise);
//   - line filters |= "s", != "s", |~ "re", !~ "re" (one value each, no
//     "or" chaining);
//   - | json, and | json l="path", … with paths a.b, a[0], a["b"];
//     without parameters nested keys are joined with "_" and arrays are
//     skipped; a name clashing with a stream label or structured metadata
//     gets the "_extracted" suffix; a line that is not a JSON object gets
//     __error__="JSONParserErr" and __error_details__;
//   - label filters | name op "value" with op =, !=, =~, !~, combined
//     with "," or "and", applied to parsed labels, structured metadata and
//     stream labels (in that precedence); a missing label is "".
//
// Strings are "double-quoted" (Go escapes) or `raw`. Label regexes are
// fully anchored, line-filter regexes are not (as in Loki; both RE2).
// Anything else (logfmt, regexp, pattern, line_format, label_format, drop,
// keep, unwrap, "or", numeric/duration/bytes comparisons, parentheses,
// metric queries) is a 400 parse error.
//
// # Query semantics
//
// start is inclusive and end exclusive; end defaults to Now and start to
// end−1h (or end−since). Integers of at most 10 digits are Unix seconds,
// longer ones nanoseconds; fractional seconds and RFC 3339 are accepted.
// limit > MaxEntriesLimitPerQuery (5000) and end−start > MaxQueryLength
// (721h) answer 400 with Loki's messages. The first limit matches in the
// requested direction are returned; entries with equal timestamps keep
// arrival order (Loki leaves that unspecified). Streams appear in order of
// their first returned entry.
//
// Structured metadata in responses follows Loki's categorize-labels
// behaviour: by default structured metadata and parsed labels are merged
// into "stream" (so one stream can split into several); with the request
// header X-Loki-Response-Encoding-Flags: categorize-labels, "stream" holds
// only stream labels, each value gets a third element
// {"structuredMetadata":{…},"parsed":{…}} (keys present only when
// non-empty, the element omitted when both are), and data carries
// "encodingFlags":["categorize-labels"]. No "stats" object is returned.
//
// # Tail
//
// A tail first sends (if any) the first limit matching entries at or after
// start, then one frame per accepted push holding its matching entries,
// after delay_for. Frames are {"streams":[…],"dropped_entries":null} with
// labels merged as above. A tail that falls 64 pushes behind loses the
// overflow and reports it in dropped_entries. There is no
// tail_max_duration and no cap on concurrent tails; Close ends all tails,
// and CloseTails ends them while the server keeps running (as the querier
// does after tail_max_duration), so clients can reconnect.
//
// # Tenancy, auth and faults
//
// X-Scope-OrgID selects a tenant; tenants share nothing. Without the
// header the tenant is "fake" (Loki with auth_enabled: false), or 401 "no
// org id" with RequireTenant. Multi-tenant "a|b" queries are not
// supported. Basic or bearer auth (a gateway's job, not Loki's) is checked
// when configured. With Options.TLS it serves HTTPS (Certificate is the
// server's certificate, for a client's CA file).
//
// Faults are opt-in; without them the server answers as Loki would. Each
// request first waits SetLatency, then checks auth, then may fail with
// FailNext's status (429 carries Loki's rate-limit text and Retry-After),
// then meets the pending fault of its URL path, if any: FailPath (a status
// and body, n times or until ClearFaults), HangPath (no answer until the
// client gives up) or HoldNext (held until the test releases it).
// SetIngestionLag hides newly accepted entries from query_range for a
// while, as a lagging ingestion path would; HoldIngestion does so until
// CatchUp, and HideStored hides what is already stored. DropTailEntries
// makes open tails lose entries and report them in dropped_entries.
//
// Pushes, Requests and Entries count traffic; RequestsTo and LastHeader
// report per URL path, Streams returns what is stored, StreamsPerPush how
// clients group their pushes and TailStarts where tails started.
//
// # Not implemented
//
// Retention, rate and stream limits (use FailNext for 429), structured
// metadata size limits, deflate encoding, OTLP, instant queries, series,
// label values, index stats, deletes and /metrics. labels ignores
// start/end. Data lives in memory until Close.
package fakeloki
