package benchreport

// Kind is what a row compares with its goal.
type Kind int

const (
	// Ratio rows compare value/limit with the goal.
	Ratio Kind = iota
	// Overhead rows compare value − limit (in the row's unit) with the goal.
	Overhead
	// Absolute rows compare the value itself with the goal; they have no limit.
	Absolute
)

// Op is a goal's comparison.
type Op int

const (
	AtMost  Op = iota // measured ≤ goal
	AtLeast           // measured ≥ goal
	Below             // measured < goal
)

func (o Op) String() string {
	switch o {
	case AtLeast:
		return "≥"
	case Below:
		return "<"
	}
	return "≤"
}

// Metric names a metric of a result line (its unit as go test prints it)
// and the factor that turns it into the row's unit (0 means 1).
type Metric struct {
	Unit  string
	Scale float64
}

// Row is one line of issue 19's table.
type Row struct {
	ID    string
	Bench string // benchmark name without the -GOMAXPROCS suffix
	// Value lists where the value comes from: the first metric present.
	Value []Metric
	// Limit is the baseline's metric ("" for Absolute rows), read from
	// LimitBench, or from Bench when LimitBench is "".
	Limit      Metric
	LimitBench string
	Unit       string // the unit of value and limit, for display
	Kind       Kind
	Op         Op
	Goal       float64
	// Check, when set, names a second check of the same issue row (the
	// table shows it under the row's ID).
	Check string
}

// GoalText is the goal as the tables print it.
func (r Row) GoalText() string {
	switch r.Kind {
	case Overhead:
		return "overhead " + r.Op.String() + " " + FormatGoal(r.Goal) + " " + r.Unit
	case Absolute:
		s := r.Op.String() + " " + FormatGoal(r.Goal) + " " + r.Unit
		if r.Check != "" {
			s = r.Check + " " + s
		}
		return s
	}
	return r.Op.String() + " " + FormatGoal(r.Goal)
}

// Name is the row's ID with its check, if any.
func (r Row) Name() string {
	if r.Check != "" {
		return r.ID + " (" + r.Check + ")"
	}
	return r.ID
}

func m(unit string) []Metric { return []Metric{{Unit: unit}} }

// Rows is issue 19's table. The benchmark names and metric units are those
// of e2e/bench/*_test.go; a renamed metric shows as "missing", not as an
// error.
var Rows = []Row{
	{ID: "transport-1", Bench: "BenchmarkTransportHTTP/clients=1", Value: m("http-p50-µs"), Limit: Metric{Unit: "direct-p50-µs"},
		Unit: "µs", Kind: Overhead, Op: AtMost, Goal: 100},
	{ID: "transport-64", Bench: "BenchmarkTransportHTTP/clients=64", Value: m("http-req/s"), Limit: Metric{Unit: "direct-req/s"},
		Unit: "req/s", Kind: Ratio, Op: AtLeast, Goal: 0.5},
	// limit-p50-µs = fsync-p50-µs + bare-post-p50-µs: the fsync the outbox
	// needs plus a bare POST to the same receiver.
	{ID: "notifier-deliver", Bench: "BenchmarkNotifierWebhookDeliver", Value: m("notify-p50-µs"), Limit: Metric{Unit: "limit-p50-µs"},
		Unit: "µs", Kind: Ratio, Op: AtMost, Goal: 1.5},
	// ms per flush of 128 deliveries: flush-ms when the benchmark reports
	// it, else its ns/op (one op is one flush).
	{ID: "notifier-flush", Bench: "BenchmarkNotifierWebhookFlush100k/tick-128", Value: []Metric{{Unit: "flush-ms"}, {Unit: "ns/op", Scale: 1e-6}},
		Unit: "ms", Kind: Absolute, Op: AtMost, Goal: 20},
	{ID: "loki-protobuf-1", Bench: "BenchmarkLogsLokiStore/protobuf/batch-1", Value: m("entries/s"), Limit: Metric{Unit: "bare-entries/s"},
		Unit: "entries/s", Kind: Ratio, Op: AtLeast, Goal: 0.8},
	{ID: "loki-protobuf-500", Bench: "BenchmarkLogsLokiStore/protobuf/batch-500", Value: m("entries/s"), Limit: Metric{Unit: "bare-entries/s"},
		Unit: "entries/s", Kind: Ratio, Op: AtLeast, Goal: 0.8},
	{ID: "loki-json-1", Bench: "BenchmarkLogsLokiStore/json/batch-1", Value: m("entries/s"), Limit: Metric{Unit: "bare-entries/s"},
		Unit: "entries/s", Kind: Ratio, Op: AtLeast, Goal: 0.8},
	{ID: "loki-json-500", Bench: "BenchmarkLogsLokiStore/json/batch-500", Value: m("entries/s"), Limit: Metric{Unit: "bare-entries/s"},
		Unit: "entries/s", Kind: Ratio, Op: AtLeast, Goal: 0.8},
	// The ratio is the benchmark's p50-growth: p50 at 100k over p50 at 10k.
	{ID: "subject-after-write", Bench: "BenchmarkSubjectSQLite/n=100k/list-after-write", Value: m("p50-µs"),
		Limit: Metric{Unit: "p50-µs"}, LimitBench: "BenchmarkSubjectSQLite/n=10k/list-after-write",
		Unit: "µs", Kind: Ratio, Op: AtMost, Goal: 1.5},
	{ID: "subject-after-write", Check: "p99", Bench: "BenchmarkSubjectSQLite/n=100k/list-after-write", Value: m("p99-µs"),
		Unit: "µs", Kind: Absolute, Op: Below, Goal: 10_000},
	{ID: "durable-sqlite", Bench: "BenchmarkDurableBeginCommit", Value: m("plugin-pairs/s"), Limit: Metric{Unit: "raw-pairs/s"},
		Unit: "pairs/s", Kind: Ratio, Op: AtLeast, Goal: 0.8},
	{ID: "cold-example", Bench: "BenchmarkQueueSQLiteColdStart", Value: m("pluginkit-only-p50-ms"), Limit: Metric{Unit: "bare-go-p50-ms"},
		Unit: "ms", Kind: Ratio, Op: AtMost, Goal: 1.5},
	{ID: "cold-queue", Bench: "BenchmarkQueueSQLiteColdStart", Value: m("plugin-p50-ms"), Limit: Metric{Unit: "bare-go-p50-ms"},
		Unit: "ms", Kind: Ratio, Op: AtMost, Goal: 2},
}
