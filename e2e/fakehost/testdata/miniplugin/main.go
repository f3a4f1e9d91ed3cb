// Command miniplugin is a tiny stand-in plugin used only by the fakehost
// tests. It deliberately does not use pkg/pluginkit: the fake host has to be
// tested against a plugin whose misbehaviour we control exactly.
//
// The mode comes from $MINIPLUGIN_MODE, or, because the manifest probe runs
// with a scrubbed environment, from the binary name: "miniplugin--<mode>"
// (tests symlink the built binary under such names). Every line read from
// stdin is echoed to stderr as "recv: <line>" so tests can check the exact
// bytes a host sent.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

var (
	mode = pickMode()
	outM sync.Mutex
)

func pickMode() string {
	if m := os.Getenv("MINIPLUGIN_MODE"); m != "" {
		return m
	}
	if _, m, ok := strings.Cut(filepath.Base(os.Args[0]), "--"); ok {
		return m
	}
	return "good"
}

const manifest = `{"name":"miniplugin","version":"0.0.1","plugin_kind":"custom",%s"protocol_version":"1.1.0","capabilities":%s,` +
	`"env_required":[{"name":"MINIPLUGIN_MODE","description":"test mode"},{"name":"MINI_DECLARED"},{"name":"MINI_DECLARED_UNSET","required":true}]}`

func printManifest() {
	desc, caps := `"description":"fakehost test plugin",`, `["health/check"]`
	switch mode {
	case "manifest-slow":
		time.Sleep(30 * time.Second)
	case "manifest-no-description":
		desc = ""
	case "manifest-env": // report the probe's environment names through the manifest
		var names []string
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			names = append(names, k)
		}
		b, _ := json.Marshal(names)
		caps = string(b)
	}
	fmt.Printf(manifest+"\n", desc, caps)
	switch mode {
	case "manifest-garbage":
		fmt.Println("manifest printed")
	case "manifest-huge":
		os.Stdout.Write([]byte(strings.Repeat(" ", 3<<19)))
	case "manifest-exit1":
		os.Exit(1)
	}
}

func write(b []byte) {
	outM.Lock()
	defer outM.Unlock()
	os.Stdout.Write(b)
}

func send(v any) {
	var b []byte
	if mode == "pretty-print" {
		b, _ = json.MarshalIndent(v, "", "  ")
	} else {
		b, _ = json.Marshal(v)
	}
	write(append(b, '\n'))
}

type okReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

type errReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Error   any             `json:"error"`
}

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "--manifest" || os.Args[1] == "-m") {
		printManifest()
		return
	}
	switch mode {
	case "print-garbage-on-stdout":
		write([]byte("miniplugin starting up\n"))
	case "id-null-before-init":
		write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}` + "\n"))
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if t := strings.TrimSpace(string(line)); t != "" {
			fmt.Fprintf(os.Stderr, "recv: %s\n", t)
			handle([]byte(t))
		}
		if err != nil {
			break
		}
	}
	fmt.Fprintln(os.Stderr, "eof")
	if mode == "never-exits" {
		time.Sleep(time.Hour) // not select{}: the runtime would call that a deadlock and exit
	}
}

func handle(line []byte) {
	var f struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(line, &f); err != nil {
		fmt.Fprintf(os.Stderr, "bad frame: %v\n", err)
		return
	}
	if f.ID == nil { // notification: never answered, except by the broken mode
		if f.Method == "exit" && mode != "ignores-exit" && mode != "never-exits" {
			os.Exit(0)
		}
		if mode == "answers-notification" {
			send(errReply{"2.0", nil, map[string]any{"code": -32601, "message": "method not found: " + f.Method}})
		}
		return
	}
	var p struct {
		Raw     string `json:"raw"`
		NoReply bool   `json:"noreply"`
		Bytes   int    `json:"bytes"`
		Ms      int    `json:"ms"`
	}
	json.Unmarshal(f.Params, &p)
	var result any = map[string]any{}
	switch f.Method {
	case "initialize":
		proto := os.Getenv("MINI_PROTO")
		if proto == "" {
			proto = "1.1.0"
		}
		result = map[string]any{"protocol_version": proto,
			"plugin_info":  map[string]any{"name": "miniplugin", "version": "0.0.1", "plugin_kind": "custom"},
			"capabilities": map[string]any{"methods": []string{"health/check"}, "streaming": false, "progress": false, "cancellation": false}}
	case "shutdown", "$/ping":
	case "health/check":
		result = map[string]any{"status": map[bool]string{true: "fine", false: "healthy"}[mode == "bad-health"]}
	case "mini/env":
		env := os.Environ()
		sort.Strings(env)
		result = env
	case "mini/cwd":
		result, _ = os.Getwd()
	case "mini/emit": // write raw bytes verbatim, then (unless noreply) answer
		write([]byte(p.Raw))
		if p.NoReply {
			return
		}
	case "mini/notify":
		send(map[string]any{"jsonrpc": "2.0", "method": "log/entry", "params": map[string]any{"level": "info", "message": "hello"}})
	case "mini/unterminated": // an object that never closes, p.Bytes long
		write([]byte(`{"jsonrpc":"2.0","method":"log/entry","params":"` + strings.Repeat("x", p.Bytes)))
		return
	case "mini/sleep":
		time.Sleep(time.Duration(p.Ms) * time.Millisecond)
	default:
		send(errReply{"2.0", f.ID, map[string]any{"code": -32601, "message": "method '" + f.Method + "' not found",
			"data": map[string]string{"category": "not_found"}}})
		return
	}
	send(okReply{"2.0", f.ID, result})
}
