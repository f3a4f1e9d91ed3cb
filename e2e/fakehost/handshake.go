package fakehost

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Values the presets put on the wire (host-and-lifecycle §6.1, §13).
const (
	HostProtocolVersion    = "1.1.0"  // daemon kind clients, HEAD generic host
	TestkitProtocolVersion = "1.0.0"  // testkit v0.3.0
	DaemonVersion          = "0.6.33" // animus CLI version the examples show
	TestkitVersion         = "0.3.0"
	// DefaultMemoryMCPCommand stands in for the daemon's own executable in
	// init_extensions.memory_mcp_stdio_command; plugins must not run it
	// during a handshake, so any absolute path does.
	DefaultMemoryMCPCommand = "/usr/local/bin/animus"
)

// ErrHandshake wraps every handshake failure.
var ErrHandshake = errors.New("fakehost: handshake failed")

type presetID int

const (
	presetDaemon presetID = iota
	presetQueue
	presetDurable
	presetNotifier
	presetTestkit
)

// Preset selects which real caller's initialize frame is reproduced. The
// zero value is PresetDaemon.
type Preset struct {
	id   presetID
	kind string // testkit suite kind
}

var (
	// PresetDaemon is the generic PluginHost (triggers, transports, log
	// storage, health probes) and the subject router: all host caps true,
	// no init_extensions, keys in struct order, 30 s.
	PresetDaemon = Preset{id: presetDaemon}
	// PresetQueueClient: sorted keys, caps all true, project_binding and
	// memory_mcp_stdio_command, 30 s.
	PresetQueueClient = Preset{id: presetQueue}
	// PresetDurableClient: host "animus-agent-runner", caps
	// streaming:false progress:false cancellation:true, project_binding,
	// sorted keys (a kind client), 30 s.
	PresetDurableClient = Preset{id: presetDurable}
	// PresetNotifier: caps all false, project_binding (memory MCP only with
	// Handshake.MemoryMCP), sorted keys, 5 s.
	PresetNotifier = Preset{id: presetNotifier}
)

// PresetTestkit is the official testkit's handshake for a suite kind
// ("subject", "transport", "trigger", "log-storage"): protocol 1.0.0, host
// "animus-<kind>-conformance" 0.3.0, progress:false, struct key order, 10 s,
// the first id-bearing frame taken as the reply, `initialized` with
// params {}.
func PresetTestkit(kind string) Preset { return Preset{id: presetTestkit, kind: kind} }

func (p Preset) String() string {
	return [...]string{"daemon", "queue-client", "durable-client", "notifier", "testkit(" + p.kind + ")"}[p.id]
}

func (p Preset) sorted() bool {
	return p.id == presetQueue || p.id == presetDurable || p.id == presetNotifier
}

// HostCaps is the host's capabilities object.
type HostCaps struct{ Streaming, Progress, Cancellation bool }

// Handshake tunes Initialize. Zero fields take the preset's value.
type Handshake struct {
	Preset Preset
	// Daemon is the daemon line whose caller Preset reproduces; the zero
	// value takes Config.Daemon (see Daemon for what each line sends).
	// Explicit fields below still win over the line.
	Daemon          Daemon
	ProtocolVersion string
	HostName        string
	HostVersion     string
	Caps            *HostCaps
	// ProjectBinding adds init_extensions.project_binding to presets that do
	// not send it (the kind-client presets always do).
	ProjectBinding bool
	// MemoryMCP adds init_extensions.memory_mcp_stdio_command (the queue
	// client always sends it).
	MemoryMCP        bool
	MemoryMCPCommand string
	// InitializedParams: nil = preset default (daemon: no params key;
	// testkit: params {}); true = params {}; false = no params key.
	InitializedParams *bool
	Timeout           time.Duration
	// RawParams, if set, replaces the preset's params verbatim (historic
	// frames such as v0.5.0's repo_scope ""). Its protocol_version still
	// drives the major-version check.
	RawParams json.RawMessage
}

// InitializeResult is the decoded reply to initialize.
type InitializeResult struct {
	ProtocolVersion  string                    `json:"protocol_version"`
	PluginInfo       PluginInfo                `json:"plugin_info"`
	Capabilities     PluginCapabilities        `json:"capabilities"`
	KindCapabilities map[string]KindCapability `json:"kind_capabilities,omitempty"`
	Raw              json.RawMessage           `json:"-"`
	Response         *Response                 `json:"-"`
}

// PluginInfo is InitializeResult.plugin_info.
type PluginInfo struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	PluginKind  string   `json:"plugin_kind"`
	Description string   `json:"description,omitempty"`
	PluginKinds []string `json:"plugin_kinds,omitempty"`
}

// PluginCapabilities is InitializeResult.capabilities.
type PluginCapabilities struct {
	Methods      []string        `json:"methods"`
	Streaming    bool            `json:"streaming"`
	Progress     bool            `json:"progress"`
	Cancellation bool            `json:"cancellation"`
	Projections  []string        `json:"projections,omitempty"`
	SubjectKinds []string        `json:"subject_kinds,omitempty"`
	MCPTools     json.RawMessage `json:"mcp_tools,omitempty"`
}

// KindCapability is one kind_capabilities entry.
type KindCapability struct {
	CrateVersion string          `json:"crate_version"`
	Extra        json.RawMessage `json:"extra,omitempty"`
}

// Initialize performs the handshake: `initialize` with the next id, a wait
// bounded by the preset's timeout, the reply checks of that caller, then
// `initialized`. On failure `initialized` is not sent.
func (h *Host) Initialize(ctx context.Context, o Handshake) (*InitializeResult, error) {
	params, proto, err := h.initParams(o)
	if err != nil {
		return nil, err
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = map[presetID]time.Duration{presetNotifier: 5 * time.Second, presetTestkit: 10 * time.Second}[o.Preset.id]
		if timeout == 0 {
			timeout = 30 * time.Second
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	testkit := o.Preset.id == presetTestkit
	var resp *Response
	if testkit {
		resp, err = h.testkitInitialize(ctx, params)
	} else {
		resp, err = h.Call(ctx, "initialize", params)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrHandshake, err)
	}
	res, err := checkInitReply(resp, proto, !testkit)
	if err != nil {
		return nil, err
	}
	sendParams := testkit
	if o.InitializedParams != nil {
		sendParams = *o.InitializedParams
	}
	var ip any
	if sendParams {
		ip = json.RawMessage(`{}`)
	}
	if err := h.Notify("initialized", ip); err != nil {
		return nil, fmt.Errorf("%w: sending initialized: %v", ErrHandshake, err)
	}
	return res, nil
}

// testkitInitialize sends initialize and, like the testkit, takes the first
// frame with an id key as the reply, whatever that id is.
func (h *Host) testkitInitialize(ctx context.Context, params json.RawMessage) (*Response, error) {
	id := h.allocID()
	frame, _ := buildFrame(id, "initialize", params)
	h.mu.Lock()
	h.register(string(id), "initialize")
	h.captureFirstID, h.firstIDFrame = true, nil
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.captureFirstID = false
		h.mu.Unlock()
	}()
	if err := h.write(frame, DefaultWriteTimeout); err != nil {
		return nil, err
	}
	var resp *Response
	var lost error
	err := h.waitFor(ctx, func() bool {
		resp, lost = h.firstIDFrame, h.lost
		return resp != nil || lost != nil
	})
	switch {
	case resp != nil:
		if !bytes.Equal(resp.ID, id) {
			return nil, fmt.Errorf("first id-bearing frame has id %s, not %s; the testkit takes it as the initialize reply", resp.ID, id)
		}
		return resp, nil
	case lost != nil:
		return nil, fmt.Errorf("%w: %v", ErrConnectionLost, lost)
	default:
		return nil, fmt.Errorf("no initialize reply: %w", err)
	}
}

// checkInitReply applies the daemon's acceptance rules (§6.2): an error or a
// missing result fails; the result must decode with its required fields; and
// (daemon callers only) its protocol major must equal the host's.
func checkInitReply(resp *Response, hostProto string, checkMajor bool) (*InitializeResult, error) {
	if resp.Error != nil {
		return nil, fmt.Errorf("%w: initialize returned error: %s (code %d)", ErrHandshake, resp.Error.Message, resp.Error.Code)
	}
	if resp.Result == nil {
		return nil, fmt.Errorf("%w: initialize reply has no result", ErrHandshake)
	}
	var req struct {
		ProtocolVersion *string                    `json:"protocol_version"`
		Info            map[string]json.RawMessage `json:"plugin_info"`
		Capabilities    json.RawMessage            `json:"capabilities"`
	}
	if err := json.Unmarshal(resp.Result, &req); err != nil {
		return nil, fmt.Errorf("%w: result does not decode as InitializeResult: %v", ErrHandshake, err)
	}
	missing := []string{}
	if req.ProtocolVersion == nil {
		missing = append(missing, "protocol_version")
	}
	for _, k := range []string{"name", "version", "plugin_kind"} {
		if v, ok := req.Info[k]; !ok || len(v) == 0 || v[0] != '"' {
			missing = append(missing, "plugin_info."+k)
		}
	}
	if req.Capabilities == nil {
		missing = append(missing, "capabilities")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: InitializeResult lacks %s", ErrHandshake, strings.Join(missing, ", "))
	}
	res := &InitializeResult{Raw: resp.Result, Response: resp}
	if err := json.Unmarshal(resp.Result, res); err != nil {
		return nil, fmt.Errorf("%w: result does not decode as InitializeResult: %v", ErrHandshake, err)
	}
	if checkMajor && major(res.ProtocolVersion) != major(hostProto) {
		return nil, fmt.Errorf("%w: rejected at handshake: incompatible plugin protocol %q (host speaks %q)",
			ErrHandshake, res.ProtocolVersion, hostProto)
	}
	return res, nil
}

// major returns the semver major, or the whole string if it does not parse
// (so garbage never matches a real major).
func major(v string) string {
	m, _, ok := strings.Cut(v, ".")
	if !ok || m == "" || strings.Trim(m, "0123456789") != "" {
		return "invalid:" + v
	}
	return m
}

// initParams renders the preset's params (§6.1 / §13) and returns the
// protocol version it announces.
func (h *Host) initParams(o Handshake) (json.RawMessage, string, error) {
	if o.RawParams != nil {
		var p struct {
			ProtocolVersion string `json:"protocol_version"`
		}
		if err := json.Unmarshal(o.RawParams, &p); err != nil {
			return nil, "", fmt.Errorf("fakehost: RawParams: %w", err)
		}
		return o.RawParams, p.ProtocolVersion, nil
	}
	p := o.Preset
	proto, name, version := HostProtocolVersion, "animus", DaemonVersion
	caps := HostCaps{true, true, true}
	binding, memory := false, false
	switch p.id {
	case presetQueue:
		binding, memory = true, true
	case presetDurable:
		name = "animus-agent-runner"
		caps = HostCaps{Streaming: false, Progress: false, Cancellation: true}
		binding = true
	case presetNotifier:
		caps = HostCaps{}
		binding = true
	case presetTestkit:
		proto, name, version = TestkitProtocolVersion, "animus-"+p.kind+"-conformance", TestkitVersion
		caps = HostCaps{Streaming: true, Progress: false, Cancellation: true}
	}
	line := o.Daemon
	if line.IsZero() {
		line = h.cfg.Daemon
	}
	proto, version, memory = line.announce(p.id, proto, version, memory)
	if o.ProtocolVersion != "" {
		proto = o.ProtocolVersion
	}
	if o.HostName != "" {
		name = o.HostName
	}
	if o.HostVersion != "" {
		version = o.HostVersion
	}
	if o.Caps != nil {
		caps = *o.Caps
	}
	binding = binding || o.ProjectBinding
	memory = memory || o.MemoryMCP

	params := obj{
		{"protocol_version", proto},
		{"host_info", obj{{"name", name}, {"version", version}}},
		{"capabilities", obj{{"streaming", caps.Streaming}, {"progress", caps.Progress}, {"cancellation", caps.Cancellation}}},
	}
	var ext obj
	if binding {
		ext = append(ext, kv{"project_binding", obj{{"project_root", h.root}, {"repo_scope", RepoScope(h.root)}}})
	}
	if memory {
		cmd := o.MemoryMCPCommand
		if cmd == "" {
			cmd = DefaultMemoryMCPCommand
		}
		ext = append(ext, kv{"memory_mcp_stdio_command", obj{{"command", cmd}}})
	}
	if len(ext) > 0 { // omitted when empty, as serde does
		params = append(params, kv{"init_extensions", ext})
	}
	if p.sorted() {
		params = params.sortedDeep()
	}
	raw, err := marshalNoEscape(params)
	return raw, proto, err
}

// RepoScope computes the daemon's informational repo scope for a canonical
// project path: sanitised basename, "-", first 6 bytes of SHA-256(path) in
// hex. Sanitising keeps ASCII letters, digits, '-' and '_' and turns any other
// byte into '-' (the exact upstream rule is not documented; plugins must
// treat the value as opaque).
func RepoScope(canonicalPath string) string {
	sum := sha256.Sum256([]byte(canonicalPath))
	base := []byte(filepath.Base(canonicalPath))
	for i, c := range base {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			base[i] = '-'
		}
	}
	return string(base) + "-" + hex.EncodeToString(sum[:6])
}

// obj is a JSON object that keeps its key order, so one description renders
// both in struct order (generic host, testkit) and sorted (kind clients, which
// build params as a serde_json::Value).
type obj []kv

type kv struct {
	k string
	v any
}

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := marshalNoEscape(e.k)
		v, err := marshalNoEscape(e.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (o obj) sortedDeep() obj {
	out := make(obj, len(o))
	for i, e := range o {
		if sub, ok := e.v.(obj); ok {
			e.v = sub.sortedDeep()
		}
		out[i] = e
	}
	sort.Slice(out, func(i, j int) bool { return out[i].k < out[j].k })
	return out
}
