package pluginkit

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"testing"
)

// Tests of the cold-path replacements: inbound.scan for json.Unmarshal of
// the envelope, hidePaths for a regexp. Each is held to what it replaced.

// unmarshalInbound is the decode inbound.scan stands in for.
func unmarshalInbound(frame []byte) (inbound, error) {
	var in inbound
	err := json.Unmarshal(frame, &in)
	return in, err
}

func sameInbound(a, b inbound) bool {
	return bytes.Equal(a.JSONRPC, b.JSONRPC) && bytes.Equal(a.ID, b.ID) && bytes.Equal(a.Method, b.Method) &&
		bytes.Equal(a.Params, b.Params) && bytes.Equal(a.Result, b.Result) && bytes.Equal(a.Error, b.Error) &&
		(a.JSONRPC == nil) == (b.JSONRPC == nil) && (a.ID == nil) == (b.ID == nil) &&
		(a.Method == nil) == (b.Method == nil) && (a.Params == nil) == (b.Params == nil) &&
		(a.Result == nil) == (b.Result == nil) && (a.Error == nil) == (b.Error == nil)
}

// checkScan holds scan to json.Unmarshal on a valid JSON frame: whatever it
// accepts it must decode the same.
func checkScan(t *testing.T, frame []byte) {
	t.Helper()
	if !json.Valid(frame) {
		return
	}
	var got inbound
	if !got.scan(frame) {
		return
	}
	want, err := unmarshalInbound(frame)
	if err != nil {
		t.Fatalf("scan accepted %q, json.Unmarshal fails: %v", frame, err)
	}
	if !sameInbound(got, want) {
		t.Fatalf("scan(%q) = %+v, json.Unmarshal gives %+v", frame, got, want)
	}
}

func TestInboundScan(t *testing.T) {
	for _, tc := range []struct {
		frame  string
		accept bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"a":[1,"}",{"b":null}]}}`, true},
		{` { "jsonrpc" : "2.0" , "id" : "x\"y" , "method":"m" } `, true},
		{`{"id":null,"params":null,"result":false,"error":{"code":-1}}`, true},
		{`{"id":1,"id":2,"method":"a","method":"b"}`, true},
		{`{"other":[[[]]],"id":-1.5e3,"method":"m"}`, true},
		{`{}`, true},
		{`{"ID":1,"method":"m"}`, false},
		{`{"\u0069d":1}`, false},
		{`{"metho\u212a":1}`, false},
		{`{"ſ":1}`, false},
		{`[1]`, false},
		{`"x"`, false},
	} {
		var in inbound
		if got := in.scan([]byte(tc.frame)); got != tc.accept {
			t.Errorf("scan(%s) = %v, want %v", tc.frame, got, tc.accept)
		}
		checkScan(t, []byte(tc.frame))
	}
}

func FuzzInboundScan(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"k":"v"}}`))
	f.Add([]byte(`{"id":"a\\b","method":"m","params":[1,{"}":"]"}]}`))
	f.Add([]byte(`{"Method":"m","iD":2}`))
	f.Fuzz(checkScan)
}

// absPathRE is the expression hidePaths replaced; the tests hold it to
// the same output.
var absPathRE = regexp.MustCompile(`(^|[\s"'=:(])(/[^\s"':,;)]+)+`)

func TestHidePathsCases(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"no paths here", "no paths here"},
		{"/etc/passwd", "<path>"},
		{"/", "/"},
		{"open /var/lib/x.db: permission denied", "open <path>: permission denied"},
		{`file="/a/b" and '/c'`, `file="<path>" and '<path>'`},
		{"a:/x:/y,z", "a:<path>:<path>,z"},
		{"(/x) /y;", "(<path>) <path>;"},
		{"k=/p=q(r)s", "k=<path>)s"},
		{"a/b /c", "a/b <path>"},
		{"//", "<path>"},
		{" / ", " / "},
		{"\t/x\n/y\f/z\r/w\v/u", "\t<path>\n<path>\f<path>\r<path>"}, // \v is not \s in RE2
		{"é /ü/é", "é <path>"},
	} {
		if got := hidePaths(tc.in); got != tc.want {
			t.Errorf("hidePaths(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if re := absPathRE.ReplaceAllString(tc.in, "$1<path>"); re != tc.want {
			t.Errorf("the regexp gives %q for %q; the table is wrong", re, tc.in)
		}
	}
}

// TestHidePathsMatchesRegexp compares random texts over the bytes that
// matter against the regexp.
func TestHidePathsMatchesRegexp(t *testing.T) {
	const alphabet = "/ab\t\n\f\r \"'=:(),;\v\xc3\xa9\xff"
	rng := rand.New(rand.NewPCG(19, 6))
	for range 20000 {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		s := string(b)
		if got, want := hidePaths(s), absPathRE.ReplaceAllString(s, "$1<path>"); got != want {
			t.Fatalf("hidePaths(%q) = %q, the regexp gives %q", s, got, want)
		}
	}
}

func FuzzHidePaths(f *testing.F) {
	f.Add("open /var/lib/x.db: denied")
	f.Add(`k=/p "/q" (/r) :/s`)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := hidePaths(s), absPathRE.ReplaceAllString(s, "$1<path>"); got != want {
			t.Fatalf("hidePaths(%q) = %q, the regexp gives %q", s, got, want)
		}
	})
}
