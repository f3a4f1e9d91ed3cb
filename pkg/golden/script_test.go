package golden

import (
	"strings"
	"testing"
)

func TestParseRejects(t *testing.T) {
	cases := []struct {
		name, script, wantErr string
	}{
		{"no client", "-- server --\n# exit 0\n", "no client steps"},
		{"unknown section", "-- clients --\n{}\n", `unknown section "clients"`},
		{"section twice", "-- client --\n{}\n-- client --\n{}\n", `section "client" twice`},
		{"unknown directive", "-- client --\n!nap 1s\n", "unknown directive !nap"},
		{"bad sleep", "-- client --\n!sleep soon\n", "invalid duration"},
		{"wait without method", "-- client --\n!wait\n", "!wait needs"},
		{"bad env", "-- env --\nNOEQUALS\n-- client --\n{}\n", "want KEY=VALUE"},
		{"bad rule", "-- normalize --\nabc\n-- client --\n{}\n", "want `regexp => replacement`"},
		{"bad regexp", "-- normalize --\n( => x\n-- client --\n{}\n", "missing closing )"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("x.txtar", []byte(c.script))
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
			}
		})
	}
}

func TestParseAndFormatKeepSections(t *testing.T) {
	src := "What it shows.\n\n-- env --\nA=1\n-- client --\n# a comment\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\n!sleep 10ms\n!exit\n-- server --\nold\n"
	sc, err := Parse("x.txtar", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Env["A"] != "1" || len(sc.Steps) != 3 || sc.Steps[1].Op != "sleep" || sc.Steps[2].Op != "exit" || string(sc.Server) != "old\n" {
		t.Fatalf("parsed %+v", sc)
	}
	out := string(sc.Format([]byte(src), []byte("new\n")))
	if want := strings.Replace(src, "old\n", "new\n", 1); out != want {
		t.Fatalf("Format:\n%s\nwant:\n%s", out, want)
	}
}

func TestNormalize(t *testing.T) {
	cases := []struct {
		name, in, want string
		rules          []string
	}{
		{"times", `{"at":"2026-11-30T08:00:00.123Z","b":"2026-05-31T00:00:00+00:00"}`, `{"at":"<TIME>","b":"<TIME>"}`, nil},
		{"ulids keep identity", `task:01JA0000000000000000000001 task:01JA0000000000000000000002 01JA0000000000000000000001`,
			`task:<ULID-1> task:<ULID-2> <ULID-1>`, nil},
		{"uuids", `"3f0c2a4e-1b2c-4d5e-8f90-0123456789ab","3f0c2a4e-1b2c-4d5e-8f90-0123456789ab"`, `"<UUID-1>","<UUID-1>"`, nil},
		{"gauges", `{"uptime_ms":12,"memory_usage_bytes":345}`, `{"uptime_ms":<N>,"memory_usage_bytes":<N>}`, nil},
		{"root and version", `{"root":"/tmp/p1/x","version":"v1.2.3"}`, `{"root":"${PROJECT_ROOT}/x","version":"<VERSION>"}`, nil},
		{"fake url", `"url":"http://127.0.0.1:4100/loki"`, `"url":"${FAKELOKI_URL}/loki"`, nil},
		{"script rule", `127.0.0.1:43123`, `127.0.0.1:<PORT>`, []string{`127\.0\.0\.1:\d+ => 127.0.0.1:<PORT>`}},
		{"plain text untouched", `"message":"not found: TASK-7"`, `"message":"not found: TASK-7"`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "-- client --\n{}\n"
			if len(c.rules) > 0 {
				src = "-- normalize --\n" + strings.Join(c.rules, "\n") + "\n" + src
			}
			sc, err := Parse("x.txtar", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(normalize([]byte(c.in), Vars{"PROJECT_ROOT": "/tmp/p1", "FAKELOKI_URL": "http://127.0.0.1:4100"}, "v1.2.3", sc.Normalize)); got != c.want {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}
