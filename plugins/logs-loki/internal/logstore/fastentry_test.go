package logstore

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/pluginkittest"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// fastEntrySeeds are entries the fast path takes and ones it must hand
// to parseEntry.
func fastEntrySeeds() []string {
	return []string{
		`{"id":"a","ts":"2026-05-17T18:20:34.123456789Z","level":"info","source":"daemon","target":"t","message":"m","fields":{"a":[1,2.5e3,-0.1,true,false,null,"x"],"b":{}}}`,
		` { "id" : "a" , "ts" : "2026-05-17T18:20:34+02:00" , "level" : "warn" , "source" : "plugin" , "source_name" : "p" , "target" : "t" , "message" : "m" , "fields" : { "a" : [ 1 , "x y" ] } } `,
		`{"id":"a","ts":"2026-05-17T18:20:34Z","level":"error","source":"cli","source_name":null,"target":"t","message":"<m> & \"q\" \\ \/ \b\f\n\r\t é 🎉","fields":null}`,
		`{"id":"a","ts":"2026-05-17T18:20:34Z","level":"debug","source":"workflow","target":"t","message":"m","extra":{"x":[{}]},"fields":"str"}`,
		`{"id":"a","ts":"2026-05-17T18:20:34Z","level":"trace","source":"daemon","target":"t","message":"dup","message":"last","fields":1,"fields":[]}`,
		`{"id":"a","ts":"2026-05-17T18:20:34Z","level":"info","source":"daemon","target":"t","message":"\u00e9\u2028"}`,
		`{"ID":"a","ts":"2026-05-17T18:20:34Z","level":"info","source":"daemon","target":"t","message":"m"}`,
		`{"id":"","ts":"2026-05-17T18:20:34Z","level":"info","source":"daemon","target":"t","message":"m"}`,
		`{"id":"a","ts":"yesterday","level":"info","source":"daemon","target":"t","message":"m"}`,
		`{"id":"a","ts":"2026-05-17T18:20:34Z","level":"loud","source":"daemon","target":"t","message":"m"}`,
		`{"id":"a","ts":"2026-05-17T18:20:34Z","level":"info","source":"kernel","target":"t","message":"m"}`,
		`{"id":"a","ts":"2026-05-17T18:20:34Z","level":"info","source":"daemon","target":"t"}`,
		`{"id":1,"ts":"2026-05-17T18:20:34Z","level":"info","source":"daemon","target":"t","message":"m"}`,
		`{"id":null,"ts":"2026-05-17T18:20:34Z","level":"info","source":"daemon","target":"t","message":"m"}`,
		`{"id":"a","ts":"2026-05-17T18:20:34Z","level":"info","source":"daemon","source_name":7,"target":"t","message":"m"}`,
		`{}`, `[]`, `"x"`, `null`,
	}
}

// checkFastEntry: whatever fastEntry accepts, parseEntry accepts with the
// same record, and the line matches rustjson.Marshal.
func checkFastEntry(t *testing.T, raw string) {
	fast, ok := fastEntry([]byte(raw))
	slow, err := parseEntry(json.RawMessage(raw))
	if err == nil {
		want, _ := rustjson.Marshal(slow.Entry)
		if got := appendLine(nil, slow.Entry); string(got) != string(want) {
			t.Fatalf("%s: line\n got %s\nwant %s", raw, got, want)
		}
	}
	if !ok {
		return
	}
	if err != nil {
		t.Fatalf("%s: fast path accepted what parseEntry rejects: %v", raw, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%s:\nfast %+v\nslow %+v", raw, fast, slow)
	}
}

func TestFastEntryMatchesParseEntry(t *testing.T) {
	accepted := 0
	for _, raw := range fastEntrySeeds() {
		checkFastEntry(t, raw)
		if _, ok := fastEntry([]byte(raw)); ok {
			accepted++
		}
	}
	if accepted != 5 {
		t.Fatalf("the fast path took %d of the seeds, want the first 5", accepted)
	}
}

func FuzzFastEntry(f *testing.F) {
	for _, s := range fastEntrySeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if json.Valid([]byte(raw)) { // pluginkit hands over valid JSON only
			checkFastEntry(t, raw)
		}
	})
}

func FuzzSplitEntries(f *testing.F) {
	for _, s := range []string{`{"entries":[]}`, ` { "x" : [1,{"a":"b"}] , "entries" : [ {"a":1} , 2 , "s" , null ] } `,
		`{"Entries":[1]}`, `{"entries":[1],"entries":[2]}`, `{"entries":null}`, `{"entries":{}}`, `{}`, `[]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			return
		}
		got, ok := splitEntries([]byte(raw))
		if !ok {
			return
		}
		var want struct {
			Entries *[]json.RawMessage `json:"entries"`
		}
		if err := json.Unmarshal([]byte(raw), &want); err != nil || want.Entries == nil {
			t.Fatalf("%s: split %d entries; encoding/json: %v", raw, len(got), err)
		}
		if fmt.Sprint(got) != fmt.Sprint(*want.Entries) {
			t.Fatalf("%s: got %s, want %s", raw, got, *want.Entries)
		}
	})
}

// TestStoreParamsErrorsMatchPluginkit: params that the fast path does not
// take are answered as pluginkit's own decoding answered them.
func TestStoreParamsErrorsMatchPluginkit(t *testing.T) {
	type plainParams struct {
		Entries *[]json.RawMessage `json:"entries"`
	}
	mux := pluginkit.NewMux()
	count := func(p *[]json.RawMessage) (StoreResult, error) {
		if p == nil {
			return StoreResult{}, StoreParams{}.Validate()
		}
		return StoreResult{Stored: len(*p)}, nil
	}
	pluginkit.Handle(mux, "fast", func(_ context.Context, p StoreParams) (StoreResult, error) { return count(p.Entries) })
	pluginkit.Handle(mux, "plain", func(_ context.Context, p plainParams) (StoreResult, error) { return count(p.Entries) })
	h := pluginkittest.Start(t, pluginkit.Plugin{Name: "t", Kind: "log_storage_backend", Mux: mux})
	if _, err := h.Handshake(pluginkittest.Handshake{ProtocolVersion: "1.0.0", HostVersion: "test"}); err != nil {
		t.Fatal(err)
	}
	for _, params := range []string{"", "null", `[]`, `[1]`, `{}`, `{"entries":null}`, `{"entries":3}`, `{"entries":"x"}`,
		`{"entries":{}}`, `{"Entries":[1,2]}`, `{"entries":[1],"entries":[1,2,3]}`, `{"entries":[]}`, `{"entries":[{"id":"a"}, 2]}`,
		`{"other":{"entries":1},"entries":[true]}`} {
		var p any
		if params != "" {
			p = params
		}
		got, gerr := h.Call("fast", p)
		want, werr := h.Call("plain", p)
		if string(got) != string(want) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Errorf("params %s:\n got %s %v\nwant %s %v", params, got, gerr, want, werr)
		}
	}
	if strings.Contains(h.Log(), "panic") {
		t.Fatal(h.Log())
	}
}
