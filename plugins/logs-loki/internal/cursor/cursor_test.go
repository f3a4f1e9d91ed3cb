package cursor

import (
	"encoding/base64"
	"errors"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	in := Cursor{Dir: Backward, TS: 150, IDs: []string{"a", "b"}, Q: Hash("x", ""), Start: 100, End: 200}
	out, err := Decode(Encode(in))
	if err != nil {
		t.Fatal(err)
	}
	if out.V != Version || out.Dir != in.Dir || out.TS != 150 || len(out.IDs) != 2 || out.Q != in.Q || out.Start != 100 || out.End != 200 {
		t.Fatalf("%+v", out)
	}
	if !out.Seen(150, "b") || out.Seen(150, "c") || out.Seen(151, "a") {
		t.Fatal("Seen")
	}
	if !out.Beyond(150) || !out.Beyond(120) || out.Beyond(151) {
		t.Fatal("Beyond backward")
	}
	out.Dir = Forward
	if !out.Beyond(150) || out.Beyond(149) {
		t.Fatal("Beyond forward")
	}
}

func TestDecodeRejects(t *testing.T) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for name, c := range map[string]struct {
		s    string
		want error
	}{
		"not base64":   {"!!!", ErrMalformed},
		"not json":     {enc("nope"), ErrMalformed},
		"version 2":    {enc(`{"v":2,"dir":"bwd","ts":1,"q":"h","s":0,"e":5}`), ErrVersion},
		"bad dir":      {enc(`{"v":1,"dir":"up","ts":1,"q":"h","s":0,"e":5}`), ErrMalformed},
		"no hash":      {enc(`{"v":1,"dir":"bwd","ts":1,"s":0,"e":5}`), ErrMalformed},
		"ts outside":   {enc(`{"v":1,"dir":"bwd","ts":9,"q":"h","s":0,"e":5}`), ErrMalformed},
		"empty window": {enc(`{"v":1,"dir":"bwd","ts":1,"q":"h","s":5,"e":5}`), ErrMalformed},
		"empty string": {"", ErrMalformed},
	} {
		if _, err := Decode(c.s); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", name, err, c.want)
		}
	}
}

func TestHashDistinguishesParts(t *testing.T) {
	a, b := Hash("a"), Hash("a")
	if Hash("ab", "c") == Hash("a", "bc") || a != b {
		t.Fatal("hash must separate parts and be stable")
	}
}
