package benchreport

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
	"time"
)

// captured is real `go test -bench` output from e2e/bench (2 CPUs, so
// every name carries the -2 suffix), trimmed to the benchmarks the rows use.
const captured = `goos: linux
goarch: amd64
pkg: github.com/animus-plugins/animus-plugins/e2e/bench
cpu: Intel(R) Xeon(R) Processor
BenchmarkDurableBeginCommit-2       	      69	   4029210 ns/op	      1438 plugin-p50-µs	      7467 plugin-p99-µs	       496.1 plugin-pairs/s	         0.9975 ratio	         0.9614 ratio-p50	      1382 raw-p50-µs	      9578 raw-p99-µs	       497.4 raw-pairs/s
BenchmarkNotifierWebhookDeliver-2   	     187	   1264952 ns/op	      6900 bare-post/s	       893.1 delivered/s	       211.0 fsync-p50-µs	      1055 notify-p50-µs	      2255 notify-p99-µs	         0.1294 ratio
BenchmarkQueueSQLiteColdStart-2     	      16	  13192616 ns/op	         2.350 bare-go-p50-ms	         3.220 bare-go-p99-ms	         6.137 plugin-p50-ms	         7.806 plugin-p99-ms	         3.826 pluginkit-only-p50-ms	         5.908 pluginkit-only-p99-ms
BenchmarkPing-2                     	   16718	     14619 ns/op
BenchmarkTransportHTTP/clients=1-2  	    1603	    156269 ns/op	         8.673 direct-p50-µs	        35.93 direct-p99-µs	     75498 direct-req/s	       112.0 http-p50-µs	       431.5 http-p99-µs	      6992 http-req/s	       103.3 overhead-µs/req
BenchmarkTransportHTTP/clients=64-2 	    3517	     78433 ns/op	       466.2 direct-p50-µs	      4828 direct-p99-µs	     80960 direct-req/s	      3649 http-p50-µs	     12835 http-p99-µs	     15144 http-req/s	        53.68 overhead-µs/req
BenchmarkLogsLokiStore/protobuf/batch-1-2         	     513	    559652 ns/op	      8243 bare-entries/s	      2333 entries/s	         0.2830 ratio	       220.0 store-p50-µs	      1909 store-p99-µs
BenchmarkLogsLokiStore/protobuf/batch-500-2       	       9	 118936164 ns/op	     32594 bare-entries/s	      4906 entries/s	         0.1505 ratio	     59208 store-p50-µs	    215170 store-p99-µs
BenchmarkLogsLokiStore/json/batch-1-2             	     392	    832082 ns/op	      3284 bare-entries/s	      1926 entries/s	         0.5864 ratio	       299.0 store-p50-µs	      3083 store-p99-µs
BenchmarkLogsLokiStore/json/batch-500-2           	       9	 126868178 ns/op	     32517 bare-entries/s	      4586 entries/s	         0.1410 ratio	     21471 store-p50-µs	    134217 store-p99-µs
BenchmarkNotifierWebhookFlush100k/tick-8-2        	      91	   9558233 ns/op	         8.000 rows/flush	        20.73 rss-after-MiB	        13.98 rss-before-MiB	        21.21 rss-peak-MiB
BenchmarkNotifierWebhookFlush100k/tick-128-2      	       7	  43262343 ns/op	       128.0 rows/flush	        22.86 rss-after-MiB	        20.87 rss-before-MiB	        23.39 rss-peak-MiB
BenchmarkSubjectSQLite/n=10k/list-2               	     204	   1842198 ns/op	       737.0 p50-µs	     10254 p99-µs
BenchmarkSubjectSQLite/n=10k/list-after-write-2   	     100	   2855821 ns/op	      1759 p50-µs	      8401 p99-µs
BenchmarkSubjectSQLite/n=100k/list-2              	     188	   3142577 ns/op	         1.536 p50-growth	      1133 p50-µs	     52464 p99-µs
BenchmarkSubjectSQLite/n=100k/list-after-write-2  	      10	  23263174 ns/op	         8.565 p50-growth	     15066 p50-µs	     45020 p99-µs
PASS
ok  	github.com/animus-plugins/animus-plugins/e2e/bench	51.118s
`

func parse(t *testing.T, s string) *Output {
	t.Helper()
	out, err := Parse(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		input  string
		lookup string
		want   map[string]float64 // a subset of the metrics
		iters  int64
		absent bool
		failed bool
	}{
		{name: "suffixed sub-benchmark", input: captured, lookup: "BenchmarkTransportHTTP/clients=1",
			want: map[string]float64{"ns/op": 156269, "http-p50-µs": 112, "direct-p50-µs": 8.673, "http-req/s": 6992}, iters: 1603},
		{name: "suffix not confused with a name's number", input: captured, lookup: "BenchmarkLogsLokiStore/protobuf/batch-1",
			want: map[string]float64{"entries/s": 2333, "bare-entries/s": 8243}, iters: 513},
		{name: "GOMAXPROCS=1 prints no suffix", lookup: "BenchmarkLogsLokiStore/json/batch-1",
			input: "BenchmarkLogsLokiStore/json/batch-1         	     392	    832082 ns/op	      3284 bare-entries/s	      1926 entries/s\n" +
				"BenchmarkLogsLokiStore/json/batch-500       	       9	 126868178 ns/op	     32517 bare-entries/s	      4586 entries/s\n",
			want: map[string]float64{"entries/s": 1926}, iters: 392},
		{name: "no metric but ns/op", input: captured, lookup: "BenchmarkPing", want: map[string]float64{"ns/op": 14619}, iters: 16718},
		{name: "name on its own line (-v), numbers below", lookup: "BenchmarkDurableBeginCommit",
			input: "BenchmarkDurableBeginCommit\n    durable_sqlite_test.go:80: seeded\nBenchmarkDurableBeginCommit-8\n      69\t   4029210 ns/op\t       496.1 plugin-pairs/s\t       497.4 raw-pairs/s\n",
			want:  map[string]float64{"plugin-pairs/s": 496.1, "raw-pairs/s": 497.4}, iters: 69},
		{name: "-count 3: the median of each metric", lookup: "BenchmarkQueueSQLiteColdStart",
			input: "BenchmarkQueueSQLiteColdStart-2 	16	13192616 ns/op	2.350 bare-go-p50-ms	6.137 plugin-p50-ms\n" +
				"BenchmarkQueueSQLiteColdStart-2 	18	12000000 ns/op	2.100 bare-go-p50-ms	9.000 plugin-p50-ms\n" +
				"BenchmarkQueueSQLiteColdStart-2 	15	14000000 ns/op	2.900 bare-go-p50-ms	5.000 plugin-p50-ms\n",
			want: map[string]float64{"bare-go-p50-ms": 2.35, "plugin-p50-ms": 6.137, "ns/op": 13192616}, iters: 16},
		{name: "a failed run", lookup: "BenchmarkTransportHTTP/clients=64", absent: true, failed: true,
			input: "BenchmarkTransportHTTP/clients=64-2 	--- FAIL: BenchmarkTransportHTTP/clients=64-2\n    transport_http_test.go:150: dial: refused\nFAIL\nexit status 1\nFAIL	github.com/animus-plugins/animus-plugins/e2e/bench	3.1s\n"},
		{name: "log lines and a child's stderr are skipped", lookup: "BenchmarkPing",
			input: "2026/12/03 level=INFO msg=started\nBenchmarkPing-2   	   16718	     14619 ns/op\n--- BENCH: BenchmarkPing-2\n    roundtrip_test.go:60: ok\n",
			want:  map[string]float64{"ns/op": 14619}, iters: 16718},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := parse(t, tc.input)
			if out.Failed != tc.failed {
				t.Errorf("Failed = %v, want %v", out.Failed, tc.failed)
			}
			res, ok := out.Lookup(tc.lookup)
			if ok == tc.absent {
				t.Fatalf("Lookup(%q) found = %v; results %+v", tc.lookup, ok, out.Results)
			}
			if tc.absent {
				return
			}
			if res.Iterations != tc.iters {
				t.Errorf("iterations = %d, want %d", res.Iterations, tc.iters)
			}
			for k, v := range tc.want {
				if got, ok := res.Metrics[k]; !ok || got != v {
					t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
				}
			}
		})
	}
}

func TestParseHeaderAndRaw(t *testing.T) {
	out := parse(t, captured)
	if out.Header["cpu"] != "Intel(R) Xeon(R) Processor" || out.Header["goarch"] != "amd64" {
		t.Errorf("header = %v", out.Header)
	}
	if len(out.Results) != 16 {
		t.Errorf("%d results, want 16", len(out.Results))
	}
	if out.Results[0].Pkg != "github.com/animus-plugins/animus-plugins/e2e/bench" {
		t.Errorf("pkg = %q", out.Results[0].Pkg)
	}
	if len(out.Raw) != 4+16+2 {
		t.Errorf("%d raw lines, want %d", len(out.Raw), 4+16+2)
	}
}

func TestBaseName(t *testing.T) {
	for _, tc := range []struct {
		name, base string
		want       bool
	}{
		{"BenchmarkPing-2", "BenchmarkPing", true},
		{"BenchmarkPing", "BenchmarkPing", true},
		{"BenchmarkPingPong-2", "BenchmarkPing", false},
		{"BenchmarkX/batch-1-2", "BenchmarkX/batch-1", true},
		{"BenchmarkX/batch-1", "BenchmarkX/batch-1", true},
		{"BenchmarkX/batch-500-2", "BenchmarkX/batch-1", false},
		{"BenchmarkX/batch-500", "BenchmarkX/batch-1", false},
		{"BenchmarkX/batch-1-", "BenchmarkX/batch-1", false},
		{"BenchmarkT/clients=64-2", "BenchmarkT/clients=6", false},
	} {
		if got := BaseName(tc.name, tc.base); got != tc.want {
			t.Errorf("BaseName(%q, %q) = %v, want %v", tc.name, tc.base, got, tc.want)
		}
	}
}

// TestRowsAgainstCapturedOutput evaluates issue 19's rows on the captured
// run (before the notifier reported limit-p50-µs).
func TestRowsAgainstCapturedOutput(t *testing.T) {
	outs := Evaluate(parse(t, captured), Rows)
	type want struct {
		status                      Status
		value, limit, ratio, budget float64
	}
	wants := map[string]want{
		"transport-1":               {status: NotMet, value: 112, limit: 8.673, ratio: 112 / 8.673, budget: (112 - 8.673) / 100},
		"transport-64":              {status: NotMet, value: 15144, limit: 80960, ratio: 15144.0 / 80960, budget: 0.5 / (15144.0 / 80960)},
		"notifier-deliver":          {status: NoLimit, value: 1055},
		"notifier-flush":            {status: NotMet, value: 43.262343, budget: 43.262343 / 20},
		"loki-protobuf-1":           {status: NotMet, value: 2333, limit: 8243, ratio: 2333.0 / 8243, budget: 0.8 / (2333.0 / 8243)},
		"loki-protobuf-500":         {status: NotMet, value: 4906, limit: 32594, ratio: 4906.0 / 32594, budget: 0.8 / (4906.0 / 32594)},
		"loki-json-1":               {status: NotMet, value: 1926, limit: 3284, ratio: 1926.0 / 3284, budget: 0.8 / (1926.0 / 3284)},
		"loki-json-500":             {status: NotMet, value: 4586, limit: 32517, ratio: 4586.0 / 32517, budget: 0.8 / (4586.0 / 32517)},
		"subject-after-write":       {status: NotMet, value: 15066, limit: 1759, ratio: 15066.0 / 1759, budget: 15066.0 / 1759 / 1.5},
		"subject-after-write (p99)": {status: NotMet, value: 45020, budget: 4.502},
		"durable-sqlite":            {status: Met, value: 496.1, limit: 497.4, ratio: 496.1 / 497.4, budget: 0.8 / (496.1 / 497.4)},
		"cold-example":              {status: NotMet, value: 3.826, limit: 2.35, ratio: 3.826 / 2.35, budget: 3.826 / 2.35 / 1.5},
		"cold-queue":                {status: NotMet, value: 6.137, limit: 2.35, ratio: 6.137 / 2.35, budget: 6.137 / 2.35 / 2},
	}
	if len(outs) != len(wants) {
		t.Fatalf("%d outcomes, want %d", len(outs), len(wants))
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	for _, o := range outs {
		w, ok := wants[o.Row.Name()]
		if !ok {
			t.Errorf("unexpected row %q", o.Row.Name())
			continue
		}
		if o.Status != w.status || !near(o.Value, w.value) || !near(o.Limit, w.limit) || !near(o.Ratio, w.ratio) || !near(o.Budget, w.budget) {
			t.Errorf("%s: got status %v value %v limit %v ratio %v budget %v (%s), want %+v",
				o.Row.Name(), o.Status, o.Value, o.Limit, o.Ratio, o.Budget, o.Detail, w)
		}
	}
}

func TestEvaluate(t *testing.T) {
	one := func(id string) Row {
		for _, r := range Rows {
			if r.Name() == id {
				return r
			}
		}
		t.Fatalf("no row %s", id)
		return Row{}
	}
	for _, tc := range []struct {
		name   string
		row    string
		input  string
		status Status
		value  float64
		budget float64
		detail string
	}{
		{name: "overhead within 100 µs", row: "transport-1", status: Met, value: 60, budget: 0.5,
			input: "BenchmarkTransportHTTP/clients=1-2 	1603	156269 ns/op	10 direct-p50-µs	60 http-p50-µs\n"},
		{name: "overhead exactly the goal is met", row: "transport-1", status: Met, value: 110, budget: 1,
			input: "BenchmarkTransportHTTP/clients=1-2 	1603	156269 ns/op	10 direct-p50-µs	110 http-p50-µs\n"},
		{name: "deliver with its limit", row: "notifier-deliver", status: Met, value: 600, budget: 600.0 / 500 / 1.5,
			input: "BenchmarkNotifierWebhookDeliver-2   	     187	   1264952 ns/op	      211.0 fsync-p50-µs	      289.0 bare-post-p50-µs	      500.0 limit-p50-µs	      600 notify-p50-µs	      1.2 deliver-ratio\n"},
		{name: "deliver without limit-p50-µs", row: "notifier-deliver", status: NoLimit, value: 1055,
			input:  "BenchmarkNotifierWebhookDeliver-2   	     187	   1264952 ns/op	      211.0 fsync-p50-µs	      1055 notify-p50-µs\n",
			detail: "BenchmarkNotifierWebhookDeliver reports no limit-p50-µs"},
		{name: "flush-ms wins over ns/op", row: "notifier-flush", status: Met, value: 18.5, budget: 18.5 / 20,
			input: "BenchmarkNotifierWebhookFlush100k/tick-128-2 	7	43262343 ns/op	18.5 flush-ms	128.0 rows/flush\n"},
		{name: "flush from ns/op", row: "notifier-flush", status: Met, value: 19.9, budget: 19.9 / 20,
			input: "BenchmarkNotifierWebhookFlush100k/tick-128-2 	7	19900000 ns/op	128.0 rows/flush\n"},
		{name: "flush: tick-8 is not tick-128", row: "notifier-flush", status: Missing,
			input:  "BenchmarkNotifierWebhookFlush100k/tick-8-2 	91	9558233 ns/op	8.000 rows/flush\n",
			detail: "BenchmarkNotifierWebhookFlush100k/tick-128 is not in the output"},
		{name: "p99 just under 10 ms", row: "subject-after-write (p99)", status: Met, value: 9999, budget: 0.9999,
			input: "BenchmarkSubjectSQLite/n=100k/list-after-write-2 	10	2326317 ns/op	1.2 p50-growth	1500 p50-µs	9999 p99-µs\n"},
		{name: "p99 of exactly 10 ms is not under it", row: "subject-after-write (p99)", status: NotMet, value: 10000, budget: 1,
			input: "BenchmarkSubjectSQLite/n=100k/list-after-write-2 	10	2326317 ns/op	1.2 p50-growth	1500 p50-µs	10000 p99-µs\n"},
		{name: "growth needs the 10k run", row: "subject-after-write", status: NoLimit, value: 1500,
			input:  "BenchmarkSubjectSQLite/n=100k/list-after-write-2 	10	2326317 ns/op	1500 p50-µs	9999 p99-µs\n",
			detail: "BenchmarkSubjectSQLite/n=10k/list-after-write is not in the output"},
		{name: "growth within 1.5", row: "subject-after-write", status: Met, value: 1500, budget: 1.2 / 1.5,
			input: "BenchmarkSubjectSQLite/n=10k/list-after-write-2 	100	2855821 ns/op	1250 p50-µs	8401 p99-µs\n" +
				"BenchmarkSubjectSQLite/n=100k/list-after-write-2 	10	2326317 ns/op	1.2 p50-growth	1500 p50-µs	9999 p99-µs\n"},
		{name: "a renamed metric is missing", row: "durable-sqlite", status: Missing,
			input:  "BenchmarkDurableBeginCommit-2 	69	4029210 ns/op	496.1 plugin-ops/s	497.4 raw-pairs/s\n",
			detail: "BenchmarkDurableBeginCommit reports no plugin-pairs/s"},
		{name: "throughput ratio at the goal", row: "transport-64", status: Met, value: 500, budget: 1,
			input: "BenchmarkTransportHTTP/clients=64-2 	3517	78433 ns/op	1000 direct-req/s	500 http-req/s\n"},
		{name: "no output at all", row: "cold-queue", status: Missing, input: "",
			detail: "BenchmarkQueueSQLiteColdStart is not in the output"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Evaluate(parse(t, tc.input), []Row{one(tc.row)})[0]
			if o.Status != tc.status || o.Detail != tc.detail {
				t.Fatalf("status %v (%q), want %v (%q)", o.Status, o.Detail, tc.status, tc.detail)
			}
			if o.Status == Missing {
				return
			}
			if math.Abs(o.Value-tc.value) > 1e-9 {
				t.Errorf("value %v, want %v", o.Value, tc.value)
			}
			if o.Status != NoLimit && math.Abs(o.Budget-tc.budget) > 1e-9 {
				t.Errorf("budget %v, want %v", o.Budget, tc.budget)
			}
		})
	}
}

func TestCells(t *testing.T) {
	outs := Evaluate(parse(t, captured), Rows)
	for _, tc := range []struct {
		row  int
		want Cells
	}{
		{0, Cells{Row: "transport-1", Bench: "BenchmarkTransportHTTP/clients=1", Value: "112 µs", Limit: "8.67 µs",
			Ratio: "12.91 (overhead +103.3 µs)", Goal: "overhead ≤ 100 µs", Budget: "103%", Status: "NOT MET"}},
		{1, Cells{Row: "transport-64", Bench: "BenchmarkTransportHTTP/clients=64", Value: "15,144 req/s", Limit: "80,960 req/s",
			Ratio: "0.19", Goal: "≥ 0.5", Budget: "267%", Status: "NOT MET"}},
		{2, Cells{Row: "notifier-deliver", Bench: "BenchmarkNotifierWebhookDeliver", Value: "1,055 µs", Limit: "not measured",
			Ratio: "—", Goal: "≤ 1.5", Budget: "—", Status: "limit not measured"}},
		{3, Cells{Row: "notifier-flush", Bench: "BenchmarkNotifierWebhookFlush100k/tick-128", Value: "43.26 ms", Limit: "none",
			Ratio: "—", Goal: "≤ 20 ms", Budget: "216%", Status: "NOT MET"}},
		{9, Cells{Row: "subject-after-write (p99)", Bench: "BenchmarkSubjectSQLite/n=100k/list-after-write", Value: "45,020 µs", Limit: "none",
			Ratio: "—", Goal: "p99 < 10,000 µs", Budget: "450%", Status: "NOT MET"}},
		{10, Cells{Row: "durable-sqlite", Bench: "BenchmarkDurableBeginCommit", Value: "496.1 pairs/s", Limit: "497.4 pairs/s",
			Ratio: "1.00", Goal: "≥ 0.8", Budget: "80%", Status: "met"}},
		{11, Cells{Row: "cold-example", Bench: "BenchmarkQueueSQLiteColdStart", Value: "3.83 ms", Limit: "2.35 ms",
			Ratio: "1.63", Goal: "≤ 1.5", Budget: "109%", Status: "NOT MET"}},
	} {
		if got := outs[tc.row].Cells(); got != tc.want {
			t.Errorf("row %d:\n got %+v\nwant %+v", tc.row, got, tc.want)
		}
	}
}

func TestFormatNumber(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {0.1294, "0.129"}, {2.35, "2.35"}, {2.0, "2"}, {8.673, "8.67"}, {43.262343, "43.26"},
		{103.3, "103.3"}, {112.0, "112"}, {1055, "1,055"}, {75498, "75,498"}, {1234567.8, "1,234,568"}, {-103.3, "-103.3"}, {-1500, "-1,500"},
	} {
		if got := FormatNumber(tc.v); got != tc.want {
			t.Errorf("FormatNumber(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
	if got := FormatGoal(10_000); got != "10,000" {
		t.Errorf("FormatGoal(10000) = %q", got)
	}
	if got := FormatBudget(math.Inf(1)); got != "∞" {
		t.Errorf("FormatBudget(+Inf) = %q", got)
	}
}

func TestText(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, Evaluate(parse(t, captured), Rows)); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, r := range Rows {
		if !strings.Contains(s, "\n"+r.Name()+" ") {
			t.Errorf("no line for %s:\n%s", r.Name(), s)
		}
	}
	for _, want := range []string{"↳ BenchmarkNotifierWebhookDeliver reports no limit-p50-µs", "1 of 13 checks met, 11 not met, 1 without a measured limit."} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in:\n%s", want, s)
		}
	}
}

func TestSVG(t *testing.T) {
	outs := Evaluate(parse(t, captured), Rows)
	var b bytes.Buffer
	if err := SVG(&b, outs, "benchmarks · efa4e75 · <today> & \"now\""); err != nil {
		t.Fatal(err)
	}
	// Well-formed XML, and count the bars by colour.
	d := xml.NewDecoder(bytes.NewReader(b.Bytes()))
	fills := map[string]int{}
	dashedBoxes := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, b.String())
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "rect" {
			continue
		}
		attr := map[string]string{}
		for _, a := range se.Attr {
			attr[a.Name.Local] = a.Value
		}
		if attr["height"] == "22" { // a row's bar
			if attr["fill"] == "none" {
				dashedBoxes++
			} else {
				fills[attr["fill"]]++
			}
		}
	}
	if fills[colorMet] != 1 || fills[colorNot] != 11 || dashedBoxes != 1 {
		t.Errorf("bars: %v met/not met, %d unmeasured; want 1 green, 11 red, 1 dashed", fills, dashedBoxes)
	}
	s := b.String()
	for _, want := range []string{"goal (100%)", "value 112 µs · limit 8.67 µs", "ratio 12.91 (overhead +103.3 µs) · goal overhead ≤ 100 µs",
		"80% met", "567% not met", "limit not measured", "&lt;today&gt; &amp; &quot;now&quot;"} {
		if !strings.Contains(s, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

func TestMarkdown(t *testing.T) {
	out := parse(t, captured)
	var b bytes.Buffer
	err := Markdown(&b, Report{Outcomes: Evaluate(out, Rows), Output: out, Commit: "efa4e75-dirty",
		Date:    time.Date(2026, 12, 3, 14, 21, 0, 0, time.UTC),
		Machine: Machine{CPU: "Intel(R) Xeon(R) Processor", CPUs: 2, Kernel: "Linux 6.18.44", Arch: "linux/amd64", GoVersion: "go1.26.0", LoadStart: "0.50 0.40 0.30", LoadEnd: "1.90 0.80 0.40"},
		Command: "go test -bench .", TestStatus: 1, SVG: "benchmarks.svg"})
	if err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{
		"- commit: `efa4e75-dirty`",
		"- date: 2026-12-03 14:21 UTC",
		"- machine: Intel(R) Xeon(R) Processor, 2 CPUs, Linux 6.18.44, linux/amd64, go1.26.0",
		"- load average (1, 5, 15 min): 0.50 0.40 0.30 at the start, 1.90 0.80 0.40 at the end",
		"- go test: **failed** (exit status 1)",
		"![each row's budget against its goal](benchmarks.svg)",
		"| transport-1 | `BenchmarkTransportHTTP/clients=1` | 112 µs | 8.67 µs | 12.91 (overhead +103.3 µs) | overhead ≤ 100 µs | 103% | ❌ not met |",
		"| durable-sqlite | `BenchmarkDurableBeginCommit` | 496.1 pairs/s | 497.4 pairs/s | 1.00 | ≥ 0.8 | 80% | ✅ met |",
		"| notifier-deliver | `BenchmarkNotifierWebhookDeliver` | 1,055 µs | not measured | — | ≤ 1.5 | — | limit not measured: BenchmarkNotifierWebhookDeliver reports no limit-p50-µs |",
		"What bounds each unmet row on the machine it was measured on, with the measurements behind it: [NOTES.md](../NOTES.md)",
		"```text\ngoos: linux\n",
		"BenchmarkSubjectSQLite/n=100k/list-after-write-2  	      10	  23263174 ns/op",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, s)
		}
	}
}

// With every row met there is nothing to explain.
func TestMarkdownAllMetHasNoPointer(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, Report{Outcomes: []Outcome{{Row: Rows[0], Status: Met}}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "NOTES.md") {
		t.Fatalf("all rows met, yet the report points at NOTES.md:\n%s", b.String())
	}
}

func TestMachine(t *testing.T) {
	model, n := ParseCPUInfo("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Processor\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) Processor\n")
	if model != "Intel(R) Xeon(R) Processor" || n != 2 {
		t.Errorf("ParseCPUInfo = %q, %d", model, n)
	}
	if got := LoadAvg("4.99 3.27 2.68 19/238 7941\n"); got != "4.99 3.27 2.68" {
		t.Errorf("LoadAvg = %q", got)
	}
	m := ReadMachine(map[string]string{"goos": "linux", "goarch": "amd64", "cpu": "from header"})
	if m.Arch != "linux/amd64" || m.CPUs < 1 || m.CPU == "" {
		t.Errorf("ReadMachine = %+v", m)
	}
}
