package pluginkit

import (
	"context"
	"encoding/json"
	"log/slog"
)

// Plugin describes one plugin binary: its identity, its method table and
// its hooks. The same value serves --manifest (which must not touch any
// backend or need any secret), the handshake and the steady state.
type Plugin struct {
	Name        string
	Version     string // stamped at build time; see BuildVersion
	Kind        string // plugin_kind, e.g. "subject_backend"
	Description string

	// Env lists every environment variable the plugin reads. The daemon
	// clears the environment and forwards only these names. Values of
	// Sensitive variables are redacted from logs and wire messages.
	Env []EnvVar
	// Secrets are further values redacted the same way from the start:
	// parts of a sensitive value that may appear alone (the password of a
	// DSN, which a driver error can quote without the rest).
	Secrets []string

	// Mux holds the request and notification handlers. Its advertised
	// methods, then "health/check", then ExtraCapabilities make up
	// capabilities.methods.
	Mux               *Mux
	ExtraCapabilities []string // marker strings: "subject_kind:task", "$vendor/..."
	SubjectKinds      []string // capabilities.subject_kinds (subject backends)
	KindCapabilities  map[string]KindCapability
	Streaming         bool // capabilities.streaming: the plugin emits stream notifications
	Progress          bool // capabilities.progress: handlers call Progress

	// Concurrency bounds how many requests run at once (default 32).
	// Serial runs requests one at a time in arrival order; Main then also
	// runs the process on one P (GOMAXPROCS=1, unless the environment
	// sets GOMAXPROCS).
	Concurrency int
	Serial      bool

	// Preflight runs in Main before serving (never for --manifest). An
	// error is printed to stderr and the process exits 1: bad configuration
	// fails loudly at start, not on the first call.
	Preflight func(ctx context.Context) error
	// Init runs on initialize, before the reply. It may open backends and
	// start background work with peer.Go. An error is sent as the
	// initialize error and the plugin stays uninitialized.
	Init func(ctx context.Context, peer *Peer, params InitializeParams) error
	// Health reports the plugin's own view for health/check.
	Health func(ctx context.Context) HealthReport
	// Close runs once when the plugin drains (shutdown, exit, EOF, SIGTERM)
	// after in-flight requests and background tasks have ended or been
	// abandoned; its context ends with the shutdown budget (lifecycle.go),
	// after which it is abandoned too.
	Close func(ctx context.Context) error

	// Commands are extra command-line modes (e.g. "inspect"), run by Main
	// instead of serving when os.Args[1] names one.
	Commands map[string]Command

	// Logger receives pluginkit's own logs. Main sets a JSON stderr logger;
	// nil discards.
	Logger *slog.Logger

	redact *redactor // shared with Logger when Main built it
	// procs, set by Main, adapts GOMAXPROCS to the calls in flight (see
	// procs); nil in process (Serve alone) and for a Serial plugin.
	procs *procs
	// signalsInstalled, set by Main, is closed once SIGTERM drains; the
	// initialize handler waits for it (see notifyTerm).
	signalsInstalled <-chan struct{}
}

// Command is a command-line mode of a plugin binary. It returns the exit code.
type Command struct {
	Summary string
	Run     func(ctx context.Context, args []string) int
}

// EnvVar is one entry of the manifest's env_required.
type EnvVar struct {
	Name        string
	Description string
	Sensitive   bool
	Required    bool
}

// KindCapability is one entry of InitializeResult.kind_capabilities.
type KindCapability struct {
	CrateVersion string `json:"crate_version"`
	Extra        any    `json:"extra,omitempty"`
}

// HostInfo identifies the host in initialize.
type HostInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// HostCapabilities are the host's declared abilities.
type HostCapabilities struct {
	Streaming    bool `json:"streaming"`
	Progress     bool `json:"progress"`
	Cancellation bool `json:"cancellation"`
}

// InitializeParams are the host's initialize params. Unknown fields and
// unknown extensions are ignored.
type InitializeParams struct {
	ProtocolVersion string                     `json:"protocol_version"`
	HostInfo        HostInfo                   `json:"host_info"`
	Capabilities    HostCapabilities           `json:"capabilities"`
	InitExtensions  map[string]json.RawMessage `json:"init_extensions,omitempty"`
}

// initializeResult is InitializeResult on the wire.
type initializeResult struct {
	ProtocolVersion  string                    `json:"protocol_version"`
	PluginInfo       pluginInfo                `json:"plugin_info"`
	Capabilities     pluginCapabilities        `json:"capabilities"`
	KindCapabilities map[string]KindCapability `json:"kind_capabilities,omitempty"`
}

type pluginInfo struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	PluginKind  string `json:"plugin_kind"`
	Description string `json:"description,omitempty"`
}

type pluginCapabilities struct {
	Methods      []string `json:"methods"`
	Streaming    bool     `json:"streaming"`
	Progress     bool     `json:"progress"`
	Cancellation bool     `json:"cancellation"`
	SubjectKinds []string `json:"subject_kinds,omitempty"`
}

// capabilityList is capabilities.methods: advertised handlers, health/check,
// then the extra markers, without duplicates.
func (p *Plugin) capabilityList() []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	if p.Mux != nil {
		for _, m := range p.Mux.Methods() {
			add(m)
		}
	}
	add("health/check")
	for _, s := range p.ExtraCapabilities {
		add(s)
	}
	return out
}

func (p *Plugin) initializeResult() initializeResult {
	return initializeResult{
		ProtocolVersion: ProtocolVersion,
		PluginInfo:      pluginInfo{Name: p.Name, Version: p.version(), PluginKind: p.Kind, Description: p.Description},
		Capabilities: pluginCapabilities{
			Methods:      p.capabilityList(),
			Streaming:    p.Streaming,
			Progress:     p.Progress,
			Cancellation: true,
			SubjectKinds: p.SubjectKinds,
		},
		KindCapabilities: p.KindCapabilities,
	}
}

func (p *Plugin) version() string {
	if p.Version != "" {
		return p.Version
	}
	return BuildVersion()
}

// buildVersion is stamped by the Makefile:
// -ldflags "-X github.com/animus-plugins/animus-plugins/pkg/pluginkit.buildVersion=v1.2.3"
var buildVersion = "0.0.0-dev"

// BuildVersion is the version stamped into this binary at build time.
func BuildVersion() string { return buildVersion }
