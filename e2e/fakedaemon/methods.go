package fakedaemon

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"time"
)

type handler func(d *Daemon, params json.RawMessage) (any, *controlError)

// methods is §1.3's unary table. Streams are in streamMethods.
var methods = map[string]handler{
	"daemon/status":    daemonStatus,
	"daemon/health":    daemonHealth,
	"daemon/start":     func(*Daemon, json.RawMessage) (any, *controlError) { return struct{}{}, nil },
	"daemon/stop":      notSupported("daemon/stop"),
	"daemon/restart":   notSupported("daemon/restart"),
	"daemon/agents":    func(*Daemon, json.RawMessage) (any, *controlError) { return map[string]any{"agents": []any{}}, nil },
	"daemon/metrics":   daemonMetrics,
	"plugin/list":      pluginList,
	"plugin/info":      pluginInfo,
	"plugin/install":   pluginInstall,
	"plugin/uninstall": pluginUninstall,
	"plugin/ping":      pluginPing,
	"plugin/call":      pluginCall,
	"plugin/search":    registry,
	"plugin/browse":    registry,
	"plugin/update":    func(*Daemon, json.RawMessage) (any, *controlError) { return map[string]any{"updates": []any{}}, nil },
	"plugin/status":    pluginStatus,
	"workflow/list":    workflowList,
	"workflow/get":     workflowGet,
	"workflow/run":     workflowStart("workflow/run"),
	"workflow/execute": workflowStart("workflow/execute"),
	"workflow/pause":   workflowTransition("paused"),
	"workflow/resume":  workflowTransition("running"),
	"workflow/cancel":  workflowCancel,
	"queue/list":       queueList,
	"queue/enqueue":    queueEnqueue,
	"queue/drop":       queueMutate("drop"),
	"queue/hold":       queueMutate("hold"),
	"queue/release":    queueMutate("release"),
	"queue/reorder":    queueReorder,
	"queue/stats":      queueStats,
	"subject/list":     subjectList,
	"subject/get":      subjectGet,
	"subject/create":   subjectCreate,
	"subject/update":   subjectUpdate,
	"subject/next":     subjectNext,
	"subject/status":   subjectStatus,
	"agent/run":        notSupported("agent/run"),
	"agent/status":     notSupported("agent/status"),
	"agent/cancel":     notSupported("agent/cancel"),
	"project/init":     notSupported("project/init"),
	"project/setup":    notSupported("project/setup"),
	"project/status":   notSupported("project/status"),
	"$/setPrincipal":   setPrincipal,
}

func (d *Daemon) dispatch(method string, params json.RawMessage) (any, *controlError) {
	h, ok := methods[method]
	if !ok {
		return nil, unknownMethod(method)
	}
	return h(d, params)
}

func notSupported(m string) handler {
	return func(*Daemon, json.RawMessage) (any, *controlError) {
		return nil, errf("not_supported", "%s is not available over the control socket", m)
	}
}

// decode reads params into v; null or absent params are {} (§1.1).
func decode(params json.RawMessage, v any) *controlError {
	t := bytes.TrimSpace(params)
	if len(t) == 0 || string(t) == "null" {
		return nil
	}
	if err := json.Unmarshal(t, v); err != nil {
		return invalidParams(err)
	}
	return nil
}

// require reports a missing required field as serde does.
func require(field string, v *string) *controlError {
	if v == nil {
		return invalidParams(errors.New("missing field `" + field + "`"))
	}
	return nil
}

func daemonStatus(d *Daemon, _ json.RawMessage) (any, *controlError) {
	root := d.opts.ProjectRoot
	if root == "" {
		root = "/fake/project"
	}
	return map[string]any{
		"running": true, "pid": os.Getpid(), "uptime_seconds": int(time.Since(d.started).Seconds()),
		"version": "0.6.33-fakedaemon", "project_root": root,
	}, nil
}

func daemonHealth(d *Daemon, _ json.RawMessage) (any, *controlError) {
	d.state.mu.Lock()
	defer d.state.mu.Unlock()
	var plugins []map[string]any
	for _, p := range d.state.plugins {
		plugins = append(plugins, map[string]any{"name": p.Name, "kind": p.Kind, "status": "healthy", "uptime_ms": 40})
	}
	return map[string]any{"status": "healthy", "plugins": plugins}, nil
}

func daemonMetrics(d *Daemon, _ json.RawMessage) (any, *controlError) {
	return map[string]any{"requests_total": len(d.Requests()), "connections_total": d.Connections()}, nil
}

func setPrincipal(_ *Daemon, params json.RawMessage) (any, *controlError) {
	var p struct {
		Principal *string `json:"principal"`
	}
	if e := decode(params, &p); e != nil {
		return nil, e
	}
	if e := require("principal", p.Principal); e != nil {
		return nil, e
	}
	return map[string]any{"principal": map[string]string{"id": *p.Principal, "kind": "user"}}, nil
}

func pluginList(d *Daemon, params json.RawMessage) (any, *controlError) {
	var p struct {
		IncludeWarnings bool    `json:"include_warnings"`
		Kind            *string `json:"kind"`
	}
	if e := decode(params, &p); e != nil {
		return nil, e
	}
	d.state.mu.Lock()
	defer d.state.mu.Unlock()
	out := []*PluginInfo{}
	for _, name := range sortedKeys(d.state.plugins) {
		if pl := d.state.plugins[name]; p.Kind == nil || pl.Kind == *p.Kind {
			out = append(out, pl)
		}
	}
	res := map[string]any{"plugins": out}
	if p.IncludeWarnings {
		res["warnings"] = []any{}
	}
	return res, nil
}

func byName(d *Daemon, params json.RawMessage) (*PluginInfo, string, *controlError) {
	var p struct {
		Name *string `json:"name"`
	}
	if e := decode(params, &p); e != nil {
		return nil, "", e
	}
	if e := require("name", p.Name); e != nil {
		return nil, "", e
	}
	pl := d.state.plugins[*p.Name]
	if pl == nil {
		return nil, *p.Name, errf("not_found", "plugin %s", *p.Name)
	}
	return pl, *p.Name, nil
}

func pluginInfo(d *Daemon, params json.RawMessage) (any, *controlError) {
	d.state.mu.Lock()
	defer d.state.mu.Unlock()
	pl, _, e := byName(d, params)
	return pl, e
}

func pluginUninstall(d *Daemon, params json.RawMessage) (any, *controlError) {
	d.state.mu.Lock()
	defer d.state.mu.Unlock()
	_, name, e := byName(d, params)
	if e != nil {
		return nil, e
	}
	delete(d.state.plugins, name)
	return struct{}{}, nil
}

func pluginPing(d *Daemon, params json.RawMessage) (any, *controlError) {
	d.state.mu.Lock()
	defer d.state.mu.Unlock()
	if _, _, e := byName(d, params); e != nil {
		return nil, e
	}
	return map[string]any{"ok": true, "latency_ms": 3}, nil
}

func pluginInstall(d *Daemon, params json.RawMessage) (any, *controlError) {
	var p struct {
		Source  *string `json:"source"`
		Version *string `json:"version"`
	}
	if e := decode(params, &p); e != nil {
		return nil, e
	}
	if e := require("source", p.Source); e != nil {
		return nil, e
	}
	name := (*p.Source)[strings.LastIndex(*p.Source, "/")+1:]
	version := "0.1.0"
	if p.Version != nil {
		version = *p.Version
	}
	pl := &PluginInfo{Name: name, Version: version, Kind: "custom", Source: *p.Source}
	d.state.mu.Lock()
	d.state.plugins[name] = pl
	d.state.mu.Unlock()
	return map[string]any{"plugin": pl, "steps": []string{"downloaded", "verified", "registered"}}, nil
}

// pluginCall relays to a plugin: the fake echoes what it would have sent.
func pluginCall(d *Daemon, params json.RawMessage) (any, *controlError) {
	var p struct {
		Name   *string         `json:"name"`
		Method *string         `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if e := decode(params, &p); e != nil {
		return nil, e
	}
	if e := require("name", p.Name); e != nil {
		return nil, e
	}
	if e := require("method", p.Method); e != nil {
		return nil, e
	}
	d.state.mu.Lock()
	_, ok := d.state.plugins[*p.Name]
	d.state.mu.Unlock()
	if !ok {
		return nil, errf("not_found", "plugin %s", *p.Name)
	}
	if len(p.Params) == 0 {
		p.Params = json.RawMessage("null")
	}
	return map[string]any{"plugin": *p.Name, "method": *p.Method, "params": p.Params}, nil
}

func registry(_ *Daemon, params json.RawMessage) (any, *controlError) {
	var p map[string]json.RawMessage
	if e := decode(params, &p); e != nil {
		return nil, e
	}
	return map[string]any{"entries": []map[string]any{
		{"name": "animus-transport-http", "kind": "transport_backend", "latest_version": "0.2.1"},
	}}, nil
}

func pluginStatus(d *Daemon, _ json.RawMessage) (any, *controlError) {
	d.state.mu.Lock()
	defer d.state.mu.Unlock()
	return map[string]any{"protocol_version": "1.1.0", "plugins": sortedKeys(d.state.plugins)}, nil
}
