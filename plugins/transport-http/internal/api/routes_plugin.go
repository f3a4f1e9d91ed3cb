package api

import (
	"encoding/json"
	"net/http"
)

func (s *Server) pluginRoutes() []route {
	byName := func(r *http.Request) (any, error) {
		name, err := pathParam(r, "name")
		if err != nil {
			return nil, err
		}
		return params{"name": name}, nil
	}
	return []route{
		{method: http.MethodGet, path: "/api/v1/plugin/list", rpc: "plugin/list", summary: "Installed plugins",
			params: []param{qString("kind", "Only plugins of this kind"), qBool("include_warnings", "Also report discovery warnings (default false)")},
			out:    "PluginList", handler: s.unary("plugin/list", buildPluginList)},
		{method: http.MethodGet, path: "/api/v1/plugin/status", rpc: "plugin/status", summary: "Live plugin runtime state (in-tree daemon extra)",
			out: "PluginRuntimeStatus", handler: s.unary("plugin/status", nil)},
		{method: http.MethodGet, path: "/api/v1/plugin/info/{name}", rpc: "plugin/info", summary: "One plugin",
			out: "PluginInfo", handler: s.unary("plugin/info", byName)},
		{method: http.MethodPost, path: "/api/v1/plugin/install", rpc: "plugin/install", body: requiredBody, in: "PluginInstallBody",
			out: "PluginInstallResult", summary: "Install a plugin", handler: s.unary("plugin/install", buildInstall)},
		{method: http.MethodDelete, path: "/api/v1/plugin/uninstall/{name}", rpc: "plugin/uninstall", summary: "Uninstall a plugin",
			out: "Empty", handler: s.unary("plugin/uninstall", byName)},
		{method: http.MethodPost, path: "/api/v1/plugin/ping/{name}", rpc: "plugin/ping", summary: "Ping a plugin",
			out: "PluginPing", handler: s.unary("plugin/ping", byName)},
		{method: http.MethodPost, path: "/api/v1/plugin/call", rpc: "plugin/call", body: requiredBody, in: "PluginCallBody",
			out: "PluginCallResult", summary: "Call a plugin method; data is the plugin's raw result", handler: s.unary("plugin/call", buildPluginCall)},
		{method: http.MethodGet, path: "/api/v1/plugin/search", rpc: "plugin/search", summary: "Search the plugin registry",
			params: []param{qString("query", "Search text (default empty: everything)"), qString("kind", "Only this kind"), qString("tag", "Only this tag")},
			out:    "RegistryEntries", handler: s.unary("plugin/search", buildSearch)},
		{method: http.MethodGet, path: "/api/v1/plugin/browse", rpc: "plugin/browse", summary: "Browse the plugin registry",
			params: []param{qString("kind", "Only this kind"), qBool("installed", "Only installed plugins"), qBool("available", "Only plugins not installed")},
			out:    "RegistryEntries", handler: s.unary("plugin/browse", buildBrowse)},
		{method: http.MethodPost, path: "/api/v1/plugin/update", rpc: "plugin/update", body: optionalBody, in: "PluginUpdateBody",
			out: "PluginUpdates", summary: "Update plugins", handler: s.unary("plugin/update", buildUpdate)},
		{method: http.MethodPost, path: "/api/v1/subject/{plugin}/call", rpc: "plugin/call", body: requiredBody, in: "SubjectCallBody",
			out: "PluginCallResult", summary: "Call a subject plugin's method (plugin/call with name = {plugin})", handler: s.unary("plugin/call", buildSubjectCall)},
	}
}

func buildPluginList(r *http.Request) (any, error) {
	q := queryOf(r)
	warnings, err := q.boolean("include_warnings")
	if err != nil {
		return nil, err
	}
	if warnings == nil {
		f := false
		warnings = &f
	}
	return params{}.set("kind", q.str("kind")).set("include_warnings", warnings), nil
}

func buildInstall(r *http.Request) (any, error) {
	var b struct {
		Source        *string `json:"source"`
		Version       *string `json:"version"`
		Yes           *bool   `json:"yes"`
		AllowUnsigned *bool   `json:"allow_unsigned"`
	}
	if err := decodeBody(r, &b, true); err != nil {
		return nil, err
	}
	if err := requireString("source", b.Source); err != nil {
		return nil, err
	}
	return params{}.set("source", b.Source).set("version", b.Version).set("yes", b.Yes).set("allow_unsigned", b.AllowUnsigned), nil
}

func buildPluginCall(r *http.Request) (any, error) {
	var b struct {
		Name   *string         `json:"name"`
		Method *string         `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := decodeBody(r, &b, true); err != nil {
		return nil, err
	}
	if err := requireString("name", b.Name); err != nil {
		return nil, err
	}
	if err := requireString("method", b.Method); err != nil {
		return nil, err
	}
	return params{}.set("name", b.Name).set("method", b.Method).set("params", b.Params), nil
}

func buildSubjectCall(r *http.Request) (any, error) {
	name, err := pathParam(r, "plugin")
	if err != nil {
		return nil, err
	}
	var b struct {
		Method *string         `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := decodeBody(r, &b, true); err != nil {
		return nil, err
	}
	if err := requireString("method", b.Method); err != nil {
		return nil, err
	}
	return params{"name": name}.set("method", b.Method).set("params", b.Params), nil
}

func buildSearch(r *http.Request) (any, error) {
	q := queryOf(r)
	query := ""
	if v := q.str("query"); v != nil {
		query = *v
	}
	return params{"query": query}.set("kind", q.str("kind")).set("tag", q.str("tag")), nil
}

func buildBrowse(r *http.Request) (any, error) {
	q := queryOf(r)
	installed, err := q.boolean("installed")
	if err != nil {
		return nil, err
	}
	available, err := q.boolean("available")
	if err != nil {
		return nil, err
	}
	return params{}.set("kind", q.str("kind")).set("installed", installed).set("available", available), nil
}

func buildUpdate(r *http.Request) (any, error) {
	var b struct {
		Name   *string `json:"name"`
		Tag    *string `json:"tag"`
		DryRun *bool   `json:"dry_run"`
	}
	if err := decodeBody(r, &b, false); err != nil {
		return nil, err
	}
	return params{}.set("name", b.Name).set("tag", b.Tag).set("dry_run", b.DryRun), nil
}

// agentRoutes keep the reference transport's agent routes. agent/* is not
// supported over the control socket today, so they answer the daemon's
// not_supported as 501, honestly, instead of the reference's 502.
func (s *Server) agentRoutes() []route {
	return []route{
		{method: http.MethodPost, path: "/api/v1/agent/run", rpc: "agent/run", body: requiredBody, in: "AgentRunBody",
			out: "AgentRunResult", summary: "Run an agent (not supported by the daemon today: 501)", handler: s.unary("agent/run", buildAgentRun)},
		{method: http.MethodGet, path: "/api/v1/agent/{id}/status", rpc: "agent/status", summary: "Agent session status (501 today)",
			out: "AgentStatus", handler: s.unary("agent/status", func(r *http.Request) (any, error) {
				id, err := pathParam(r, "id")
				return params{"id": id}, err
			})},
		{method: http.MethodPost, path: "/api/v1/agent/{id}/cancel", rpc: "agent/cancel", summary: "Cancel an agent session (501 today)",
			out: "Empty", handler: s.unary("agent/cancel", func(r *http.Request) (any, error) {
				id, err := pathParam(r, "id")
				return params{"session_id": id}, err
			})},
	}
}

func buildAgentRun(r *http.Request) (any, error) {
	var b struct {
		Provider *string           `json:"provider"`
		Model    *string           `json:"model"`
		Prompt   *string           `json:"prompt"`
		System   *string           `json:"system"`
		Cwd      *string           `json:"cwd"`
		Env      map[string]string `json:"env"`
	}
	if err := decodeBody(r, &b, true); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"provider", b.Provider}, {"model", b.Model}, {"prompt", b.Prompt}} {
		if err := requireString(f.name, f.v); err != nil {
			return nil, err
		}
	}
	p := params{}.set("provider", b.Provider).set("model", b.Model).set("prompt", b.Prompt).
		set("system", b.System).set("cwd", b.Cwd)
	if len(b.Env) > 0 {
		p["env"] = b.Env
	}
	return p, nil
}
