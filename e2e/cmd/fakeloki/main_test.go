package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
)

var (
	buildOnce sync.Once
	builtPath string
	buildErr  error
)

// binary is the command under test: $ANIMUS_BIN_DIR/fakeloki when present,
// else one build of this package per test process.
func binary(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv(binaries.EnvBinDir); dir != "" {
		if p := filepath.Join(dir, "fakeloki"); fileExists(p) {
			return p
		}
	}
	buildOnce.Do(func() {
		root, err := binaries.RepoRoot()
		if err != nil {
			buildErr = err
			return
		}
		out := filepath.Join(root, ".cache", "e2e-bin", "fakeloki")
		cmd := exec.Command("go", "build", "-o", out, "./e2e/cmd/fakeloki")
		cmd.Dir = root
		if msg, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./e2e/cmd/fakeloki: %v\n%s", err, msg)
			return
		}
		builtPath = out
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtPath
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// proc is one running fakeloki command.
type proc struct {
	cmd    *exec.Cmd
	url    string
	stderr *bytes.Buffer
	done   chan struct{}
}

// launch starts the command with args and env, waits for its LOKI_URL line
// and ends it (SIGKILL) at cleanup if the test did not stop it.
func launch(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
		close(p.done)
	}()
	select {
	case line := <-lines:
		u, ok := strings.CutPrefix(strings.TrimSpace(line), "LOKI_URL=")
		if !ok {
			<-p.done
			t.Fatalf("first stdout line %q, want LOKI_URL=…; stderr: %s", line, p.stderr)
		}
		p.url = u
	case <-time.After(20 * time.Second):
		t.Fatalf("no LOKI_URL line within 20s; stderr: %s", p.stderr)
	}
	return p
}

func request(t *testing.T, method, u, tenant, contentType string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if tenant != "" {
		req.Header.Set("X-Scope-OrgID", tenant)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestPushAndQueryThroughCommand pushes one JSON and one protobuf+snappy
// entry to the running command and reads both back with query_range,
// tenant-scoped as with auth_enabled: true.
func TestPushAndQueryThroughCommand(t *testing.T) {
	p := launch(t, nil, "-addr", "127.0.0.1:0", "-require-tenant")
	ts := time.Now().Add(-time.Minute).Truncate(time.Second).Add(123456789)
	jsonBody := fmt.Sprintf(`{"streams":[{"stream":{"service_name":"animus","source":"daemon","level":"info"},"values":[[%q,"json line",{"animus_id":"e1"}]]}]}`,
		strconv.FormatInt(ts.UnixNano(), 10))
	protoBody := fakeloki.EncodeProtoPush(map[string][]fakeloki.Entry{
		`{service_name="animus", source="plugin", level="warn"}`: {{TS: ts.Add(time.Nanosecond), Line: "proto line", SM: map[string]string{"animus_id": "e2"}}},
	})
	push := p.url + "/loki/api/v1/push"
	for _, c := range []struct {
		name, tenant, ct string
		body             []byte
		want             int
	}{
		{"json", "animus", "application/json", []byte(jsonBody), http.StatusNoContent},
		{"protobuf", "animus", "application/x-protobuf", protoBody, http.StatusNoContent},
		{"no tenant", "", "application/json", []byte(jsonBody), http.StatusUnauthorized},
	} {
		if code, body := request(t, http.MethodPost, push, c.tenant, c.ct, c.body); code != c.want {
			t.Fatalf("%s push: %d %s, want %d", c.name, code, body, c.want)
		}
	}
	q := url.Values{
		"query":     {`{service_name="animus"}`},
		"start":     {strconv.FormatInt(ts.Add(-time.Hour).UnixNano(), 10)},
		"end":       {strconv.FormatInt(ts.Add(time.Hour).UnixNano(), 10)},
		"direction": {"forward"},
	}
	code, body := request(t, http.MethodGet, p.url+"/loki/api/v1/query_range?"+q.Encode(), "animus", "", nil)
	if code != http.StatusOK {
		t.Fatalf("query_range: %d %s", code, body)
	}
	var res struct {
		Data struct {
			Result []struct {
				Stream map[string]string `json:"stream"`
				Values [][]any           `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	var got []string
	for _, s := range res.Data.Result {
		for _, v := range s.Values {
			got = append(got, fmt.Sprintf("%s %v %s %s", s.Stream["level"], v[0], v[1], s.Stream["animus_id"]))
		}
	}
	want := []string{
		fmt.Sprintf("info %d json line e1", ts.UnixNano()),
		fmt.Sprintf("warn %d proto line e2", ts.UnixNano()+1),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("query_range entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if code, _ := request(t, http.MethodGet, p.url+"/loki/api/v1/query_range?"+q.Encode(), "other", "", nil); code != http.StatusOK {
		t.Fatalf("other tenant query: %d", code)
	}
}

// TestBasicAuthFromEnv: the password comes from FAKELOKI_PASSWORD, and a
// request without it is refused as a gateway would.
func TestBasicAuthFromEnv(t *testing.T) {
	p := launch(t, []string{"FAKELOKI_PASSWORD=s3cret"}, "-addr", "127.0.0.1:0", "-user", "op")
	for _, c := range []struct {
		name       string
		user, pass string
		want       int
	}{
		{"right", "op", "s3cret", http.StatusOK},
		{"wrong password", "op", "nope", http.StatusUnauthorized},
		{"none", "", "", http.StatusUnauthorized},
	} {
		req, _ := http.NewRequest(http.MethodGet, p.url+"/loki/api/v1/labels", nil)
		if c.user != "" {
			req.SetBasicAuth(c.user, c.pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d, want %d", c.name, resp.StatusCode, c.want)
		}
	}
}

// TestStopsOnSignal: SIGINT and SIGTERM end the process with status 0 and
// free the port.
func TestStopsOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			p := launch(t, nil, "-addr", "127.0.0.1:0")
			if code, body := request(t, http.MethodGet, p.url+"/ready", "", "", nil); code != http.StatusOK || body != "ready" {
				t.Fatalf("/ready: %d %q", code, body)
			}
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-p.done:
			case <-time.After(10 * time.Second):
				t.Fatalf("still running 10s after %v", sig)
			}
			if code := p.cmd.ProcessState.ExitCode(); code != 0 {
				t.Fatalf("exit code %d after %v; stderr: %s", code, sig, p.stderr)
			}
			host := strings.TrimPrefix(p.url, "http://")
			l, err := net.Listen("tcp", host)
			if err != nil {
				t.Fatalf("port %s still taken after exit: %v", host, err)
			}
			l.Close()
		})
	}
}

// TestRefusesBadInvocations: usage errors exit 2 with a message on stderr
// and nothing on stdout (so a script waiting for LOKI_URL= fails fast).
func TestRefusesBadInvocations(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, c := range []struct {
		name   string
		env    []string
		args   []string
		stderr string
	}{
		{"unknown flag", nil, []string{"-nope"}, "flag provided but not defined"},
		{"user without password", nil, []string{"-user", "op"}, "FAKELOKI_PASSWORD"},
		{"stray argument", nil, []string{"-addr", "127.0.0.1:0", "extra"}, `unexpected argument "extra"`},
		{"address in use", nil, []string{"-addr", busy.Addr().String()}, "listen"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary(t), c.args...)
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, c.env...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != 2 {
				t.Fatalf("exit %d (%v), want 2; stderr: %s", code, err, stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
			if !strings.Contains(stderr.String(), c.stderr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), c.stderr)
			}
		})
	}
}

// TestBehaviourFlags: the flags reach the fake. An entry with structured
// metadata is refused under -disallow-structured-metadata; under
// -ingestion-lag an accepted entry is not yet visible to query_range.
func TestBehaviourFlags(t *testing.T) {
	ts := time.Now().Add(-time.Minute)
	body := fmt.Sprintf(`{"streams":[{"stream":{"service_name":"animus"},"values":[[%q,"line",{"animus_id":"e1"}]]}]}`,
		strconv.FormatInt(ts.UnixNano(), 10))
	q := url.Values{
		"query": {`{service_name="animus"}`},
		"start": {strconv.FormatInt(ts.Add(-time.Minute).UnixNano(), 10)},
		"end":   {strconv.FormatInt(ts.Add(time.Minute).UnixNano(), 10)},
	}
	for _, c := range []struct {
		name      string
		args      []string
		push      int
		pushBody  string
		wantLines int
	}{
		{"defaults", nil, http.StatusNoContent, "", 1},
		{"disallow structured metadata", []string{"-disallow-structured-metadata"}, http.StatusBadRequest, "structured metadata", 0},
		{"ingestion lag", []string{"-ingestion-lag", "1h"}, http.StatusNoContent, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := launch(t, nil, append([]string{"-addr", "127.0.0.1:0"}, c.args...)...)
			code, msg := request(t, http.MethodPost, p.url+"/loki/api/v1/push", "", "application/json", []byte(body))
			if code != c.push || !strings.Contains(msg, c.pushBody) {
				t.Fatalf("push: %d %q, want %d containing %q", code, msg, c.push, c.pushBody)
			}
			code, msg = request(t, http.MethodGet, p.url+"/loki/api/v1/query_range?"+q.Encode(), "", "", nil)
			if code != http.StatusOK {
				t.Fatalf("query_range: %d %s", code, msg)
			}
			if got := strings.Count(msg, `"line"`); got != c.wantLines {
				t.Errorf("query_range returned %d lines, want %d: %s", got, c.wantLines, msg)
			}
		})
	}
}
