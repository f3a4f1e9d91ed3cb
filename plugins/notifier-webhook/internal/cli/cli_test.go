package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/notifier"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/store"
)

type run struct {
	code           int
	stdout, stderr string
}

func runCmd(cmd func(context.Context, Env, []string) int, env map[string]string, stdin string, args ...string) run {
	var out, errb bytes.Buffer
	e := Env{Getenv: func(k string) string { return env[k] }, Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}
	code := cmd(context.Background(), e, args)
	return run{code, out.String(), errb.String()}
}

func events(project string, n int, offset int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"schema":"animus.daemon.event.v1","id":"evt-%d","seq":%d,"timestamp":"2026-01-01T00:00:00Z","event_type":"workflow_completed","project_root":%q,"data":{"workflow_id":"wf"}}`+"\n",
			i+offset, i+offset, project)
	}
	return b.String()
}

func TestBackfillThenDeadLetters(t *testing.T) {
	project := t.TempDir()
	env := map[string]string{"ANIMUS_WEBHOOK_URL": "http://127.0.0.1:1/hook"}

	r := runCmd(Backfill, env, events(project, 5, 0)+"\n"+`{"event":{"id":"wrapped","event_type":"x","data":{}}}`+"\n", "--project", project)
	if r.code != 0 || !strings.Contains(r.stdout, "read 6 event(s): 6 deliveries enqueued, 0 already in the outbox") {
		t.Fatalf("backfill: %+v", r)
	}
	r = runCmd(Backfill, env, events(project, 7, 0), "--project", project)
	if r.code != 0 || !strings.Contains(r.stdout, "2 deliveries enqueued, 5 already in the outbox") {
		t.Fatalf("second backfill: %+v", r)
	}
	r = runCmd(Backfill, env, events(project, 2, 100)+"{not json\n", "--project", project)
	if r.code != 1 || !strings.Contains(r.stderr, "line 3: not a daemon event record") {
		t.Fatalf("bad line: %+v", r)
	}
	r = runCmd(Backfill, nil, events(project, 1, 200), "--project", project)
	if r.code != 0 || !strings.Contains(r.stdout, "1 event(s) matched no subscription") {
		t.Fatalf("no config: %+v", r)
	}

	// Dead-letter two rows the way the plugin would, then list and replay.
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{Path: filepath.Join(project, ".animus", "notifier.sqlite")})
	if err != nil {
		t.Fatal(err)
	}
	counts, _ := st.Count(ctx)
	if counts.Pending != 8 {
		t.Fatalf("pending %d, want 8 (nothing from the rejected batch)", counts.Pending)
	}
	claimed, _ := st.Claim(ctx, project, 2)
	for _, d := range claimed {
		if err := st.MarkDead(ctx, d, "HTTP 410 Gone", 410); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	r = runCmd(DeadLetters, nil, "", "--project", project)
	if r.code != 0 || !strings.Contains(r.stdout, "2 dead letter(s)") || !strings.Contains(r.stdout, "HTTP 410 Gone") {
		t.Fatalf("list: %+v", r)
	}
	r = runCmd(DeadLetters, nil, "", "--project", project, "--json")
	var list notifier.DeadLettersResult
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil || list.Total != 2 || list.DeadLetters[0].LastStatusCode != 410 {
		t.Fatalf("json list: %+v", r)
	}
	r = runCmd(DeadLetters, nil, "", "--project", project, "--replay", list.DeadLetters[0].DeliveryID, "--replay", "nope")
	if r.code != 1 || !strings.Contains(r.stdout, "replayed 1") || !strings.Contains(r.stderr, "nope") {
		t.Fatalf("replay one: %+v", r)
	}
	r = runCmd(DeadLetters, nil, "", "--project", project, "--all")
	if r.code != 0 || !strings.Contains(r.stdout, "replayed 1") {
		t.Fatalf("replay all: %+v", r)
	}
}

func TestDeadLettersUsage(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nowhere")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--project", missing}, 1, "no outbox at"},
		{[]string{"--all", "--replay", "x"}, 2, "--replay ID"},
		{[]string{"stray"}, 2, "no other arguments"},
		{[]string{"--bogus"}, 2, "flag provided but not defined"},
	}
	for _, c := range cases {
		r := runCmd(DeadLetters, nil, "", c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: %+v", c.args, r)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Error("listing a missing outbox created it")
	}
}
