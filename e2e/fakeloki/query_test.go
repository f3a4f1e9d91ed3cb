package fakeloki

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// seed stores six entries across four streams, one second apart, with
// JSON lines and structured metadata like the plugin writes.
func seed(t *testing.T, s *Server) {
	t.Helper()
	type e struct{ source, level, target, msg string }
	data := []e{
		{"daemon", "info", "daemon.scheduler.dispatch", "dispatched job"},
		{"daemon", "warn", "daemon.scheduler.queue", "queue slow"},
		{"plugin", "error", "plugin.linear.client", "request failed"},
		{"plugin", "info", "plugin.linear.client", "listed 14 issues"},
		{"daemon", "info", "daemon.events.run-started", "run-started"},
		{"cli", "debug", "cli.main", `quote " and \ backslash`},
	}
	for i, d := range data {
		line, _ := json.Marshal(map[string]any{"id": fmt.Sprint("id", i), "level": d.level, "target": d.target,
			"message": d.msg, "fields": map[string]any{"n": i}})
		ts := base.Add(-time.Minute + time.Duration(i)*time.Second)
		body := jsonBody(map[string]string{"service_name": "animus", "source": d.source, "level": d.level},
			[]any{ns(ts), string(line), map[string]string{"animus_id": fmt.Sprint("id", i), "target": d.target}})
		if code, b := pushJSON(t, s, body); code != http.StatusNoContent {
			t.Fatalf("seed: %d %s", code, b)
		}
	}
}

func ids(q queryResp) []string {
	var out []string
	for _, l := range q.lines() {
		var m struct{ ID string }
		_ = json.Unmarshal([]byte(l), &m)
		out = append(out, m.ID)
	}
	return out
}

func TestLogQL(t *testing.T) {
	s := newTestServer(t, Options{})
	seed(t, s)
	cases := []struct {
		name, query string
		want        []string // ids, forward order
	}{
		{"selector eq", `{service_name="animus", source="daemon"}`, []string{"id0", "id1", "id4"}},
		{"selector regex", `{service_name="animus", level=~"warn|error"}`, []string{"id1", "id2"}},
		{"selector neq", `{service_name="animus", source!="daemon"}`, []string{"id2", "id3", "id5"}},
		{"selector not regex", `{service_name="animus", level!~"info|debug"}`, []string{"id1", "id2"}},
		{"regex anchored", `{service_name=~"anim"}`, nil},
		{"line contains", `{service_name="animus"} |= "issues"`, []string{"id3"}},
		{"line not contains", `{service_name="animus"} != "daemon"`, []string{"id2", "id3", "id5"}},
		{"line regex unanchored", `{service_name="animus"} |~ "fail|slow"`, []string{"id1", "id2"}},
		{"line not regex", "{service_name=\"animus\"} !~ `\"level\":\"(info|debug)\"`", []string{"id1", "id2"}},
		{"sm eq", `{service_name="animus"} | animus_id="id3"`, []string{"id3"}},
		{"sm regex raw", "{service_name=\"animus\"} | target=~`^daemon\\.scheduler\\.[^.]*$`", []string{"id0", "id1"}},
		{"sm glob ** ", "{service_name=\"animus\"} | target=~`^daemon\\..*$`", []string{"id0", "id1", "id4"}},
		{"sm dash literal", "{service_name=\"animus\"} | target=~`^daemon\\.events\\.run-started$`", []string{"id4"}},
		{"sm neq", `{service_name="animus", source="plugin"} | target!="plugin.linear.client"`, nil},
		{"missing label eq empty", `{service_name="animus"} | nothere=""`, []string{"id0", "id1", "id2", "id3", "id4", "id5"}},
		{"json all", `{service_name="animus"} | json | message="queue slow"`, []string{"id1"}},
		{"json nested", `{service_name="animus"} | json | fields_n="2"`, []string{"id2"}},
		{"json clash suffix", `{service_name="animus"} | json | level_extracted="warn"`, []string{"id1"}},
		{"json params", `{service_name="animus"} | json aid="id", tgt="target" | aid="id5", tgt=~"cli.*"`, []string{"id5"}},
		{"json path", `{service_name="animus"} | json n="fields.n" | n=~"[34]"`, []string{"id3", "id4"}},
		{"json escaped value", `{service_name="animus"} | json | message="quote \" and \\ backslash"`, []string{"id5"}},
		{"filters and comma", `{service_name="animus"} | source_x="", animus_id=~"id[0-2]" and target=~"daemon.*"`, []string{"id0", "id1"}},
		{"chained", `{service_name="animus"} |= "linear" | json | level="info"`, []string{"id3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body, qr := queryRange(t, s, rangeOf(tc.query, "direction", "forward"))
			if code != http.StatusOK {
				t.Fatalf("%d %s", code, body)
			}
			if qr.Status != "success" || qr.Data.ResultType != "streams" {
				t.Fatalf("envelope %s", body)
			}
			if got := ids(qr); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestJSONParserError(t *testing.T) {
	s := newTestServer(t, Options{})
	pushJSON(t, s, jsonBody(map[string]string{"app": "a"}, []any{ns(base.Add(-time.Second)), "not json"}))
	_, _, qr := queryRange(t, s, rangeOf(`{app="a"} | json | __error__="JSONParserErr"`))
	if len(qr.lines()) != 1 || qr.Data.Result[0].Stream["__error__"] != "JSONParserErr" {
		t.Fatalf("%+v", qr.Data.Result)
	}
}

func TestQueryParams(t *testing.T) {
	s := newTestServer(t, Options{MaxQueryLength: 48 * time.Hour})
	seed(t, s)
	sel := `{service_name="animus"}`
	cases := []struct {
		name    string
		params  []string
		code    int
		want    []string
		errPart string
	}{
		{"default backward newest first", nil, 200, []string{"id5", "id4", "id3", "id2", "id1", "id0"}, ""},
		{"backward limit keeps newest", []string{"limit", "2"}, 200, []string{"id5", "id4"}, ""},
		{"forward limit keeps oldest", []string{"limit", "2", "direction", "forward"}, 200, []string{"id0", "id1"}, ""},
		{"start inclusive end exclusive", []string{"direction", "forward", "start", ns(base.Add(-59 * time.Second)), "end", ns(base.Add(-57 * time.Second))}, 200, []string{"id1", "id2"}, ""},
		{"rfc3339", []string{"direction", "forward", "start", base.Add(-57 * time.Second).Format(time.RFC3339Nano), "end", base.Format(time.RFC3339)}, 200, []string{"id3", "id4", "id5"}, ""},
		{"float seconds", []string{"direction", "forward", "start", fmt.Sprintf("%d.5", base.Add(-56*time.Second).Unix()), "end", fmt.Sprint(base.Unix())}, 200, []string{"id5"}, ""},
		{"limit max ok", []string{"limit", "5000"}, 200, []string{"id5", "id4", "id3", "id2", "id1", "id0"}, ""},
		{"limit over max", []string{"limit", "5001"}, 400, nil, "max entries limit per query exceeded, limit > max_entries_limit_per_query (5001 > 5000)"},
		{"limit zero", []string{"limit", "0"}, 400, nil, "limit must be a positive value"},
		{"window too long", []string{"start", ns(base.Add(-49 * time.Hour))}, 400, nil, "the query time range exceeds the limit"},
		{"end before start", []string{"start", ns(base), "end", ns(base.Add(-time.Hour))}, 400, nil, "end timestamp must not be before"},
		{"bad direction", []string{"direction", "sideways"}, 400, nil, "invalid direction"},
		{"bad start", []string{"start", "soon"}, 400, nil, "invalid parameter \"start\""},
		{"bad query", []string{"query", `{service_name="animus"`}, 400, nil, "parse error"},
		{"empty-compatible selector", []string{"query", `{a=~".*"}`}, 400, nil, "at least one regexp or equality matcher"},
		{"unsupported stage", []string{"query", sel + ` | logfmt`}, 400, nil, "does not implement the logfmt stage"},
		{"bad regex", []string{"query", sel + ` |~ "("`}, 400, nil, "invalid regex"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body, qr := queryRange(t, s, rangeOf(sel, tc.params...))
			if code != tc.code {
				t.Fatalf("code %d %s", code, body)
			}
			if tc.errPart != "" && !strings.Contains(body, tc.errPart) {
				t.Fatalf("body %q, want %q", body, tc.errPart)
			}
			if code == 200 && !reflect.DeepEqual(ids(qr), tc.want) {
				t.Fatalf("got %v want %v", ids(qr), tc.want)
			}
		})
	}
}

func TestQueryDefaultsToLastHour(t *testing.T) {
	s := newTestServer(t, Options{})
	pushJSON(t, s, jsonBody(map[string]string{"app": "a"}, []any{ns(base.Add(-2 * time.Hour)), "old"}, []any{ns(base.Add(-time.Minute)), "new"}))
	_, _, qr := queryRange(t, s, map[string][]string{"query": {`{app="a"}`}})
	if got := qr.lines(); !reflect.DeepEqual(got, []string{"new"}) {
		t.Fatalf("%v", got)
	}
}
