package fakehost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// Limits of the daemon's manifest probe (host-and-lifecycle §3.2).
const (
	ProbeTimeout   = 5 * time.Second
	ProbeOutputCap = 1 << 20
)

// ProbeOptions tunes Probe. The zero value is the daemon's probe.
type ProbeOptions struct {
	// Allowlist is the base environment allowlist; nil means AllowlistFull.
	// Nothing else passes: the daemon gives the probe no env_required values.
	Allowlist []string
	// Env overlays os.Environ() to form the daemon's environment (only
	// allowlisted names reach the child).
	Env map[string]string
	// Dir is the child's working directory; empty inherits ours.
	Dir string
	// Timeout replaces the 5 s limit (tests of the timeout use a short one).
	Timeout time.Duration
	// Args replaces the default []string{"--manifest"} (e.g. {"-m"}).
	Args []string
	// Schemas, if set, also validates stdout against PluginManifest.
	Schemas *schemacheck.Set
}

// Manifest is the decoded `--manifest` output.
type Manifest struct {
	Name, Version, PluginKind, Description, ProtocolVersion string

	Capabilities           []string
	PluginKinds            []string
	EnvRequired            []EnvRequirement
	NotificationBufferSize *uint64
	SupportsMCP            *bool

	// Raw is stdout with surrounding whitespace removed.
	Raw json.RawMessage
}

// EnvRequirement is one entry of env_required.
type EnvRequirement struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Sensitive   bool   `json:"sensitive,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// EnvNames returns the declared env_required names.
func (m *Manifest) EnvNames() []string {
	names := make([]string, 0, len(m.EnvRequired))
	for _, e := range m.EnvRequired {
		names = append(names, e.Name)
	}
	return names
}

// ProbeFailure classifies why a probe failed; the daemon turns every one of
// them into a discovery warning and leaves the plugin out.
type ProbeFailure string

const (
	ProbeStartFailed ProbeFailure = "start failed"
	ProbeTimedOut    ProbeFailure = "timed out"
	ProbeExitStatus  ProbeFailure = "non-zero exit"
	ProbeOverCap     ProbeFailure = "stdout over the 1 MiB cap"
	ProbeNotOneValue ProbeFailure = "stdout is not exactly one JSON object"
	ProbeMissing     ProbeFailure = "required field missing or not a string"
	ProbeDecode      ProbeFailure = "does not decode as PluginManifest"
	ProbeSchema      ProbeFailure = "fails the PluginManifest schema"
)

// ProbeError carries the failure class and what the child printed.
type ProbeError struct {
	Failure  ProbeFailure
	Detail   string
	ExitCode int
	Stdout   []byte
	Stderr   []byte
}

func (e *ProbeError) Error() string {
	s := "manifest probe: " + string(e.Failure)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Probe runs `<binary> --manifest` like the daemon's discovery: stdin is
// /dev/null, the environment is cleared to the allowlist, the child is killed
// after the timeout, and stdout/stderr are capped at 1 MiB each.
func Probe(ctx context.Context, binary string, opts ProbeOptions) (*Manifest, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = ProbeTimeout
	}
	args := opts.Args
	if args == nil {
		args = []string{"--manifest"}
	}
	allow := opts.Allowlist
	if allow == nil {
		allow = AllowlistFull
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := exec.CommandContext(pctx, binary, args...)
	cmd.Env = filterEnv(daemonEnviron(opts.Env), allow, nil, nil)
	cmd.Dir = opts.Dir
	stdout, stderr := &capBuffer{max: ProbeOutputCap}, &capBuffer{max: ProbeOutputCap}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// A grandchild holding the pipes must not stretch the probe past the
	// timeout.
	cmd.WaitDelay = 500 * time.Millisecond

	runErr := cmd.Run()
	fail := func(f ProbeFailure, detail string) error {
		code := -1
		if cmd.ProcessState != nil {
			code = cmd.ProcessState.ExitCode()
		}
		return &ProbeError{Failure: f, Detail: detail, ExitCode: code,
			Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	}
	if ctx.Err() != nil { // the caller gave up; not the plugin's fault
		return nil, fmt.Errorf("manifest probe: %w", ctx.Err())
	}
	if errors.Is(pctx.Err(), context.DeadlineExceeded) {
		return nil, fail(ProbeTimedOut, timeout.String())
	}
	if runErr != nil {
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			return nil, fail(ProbeExitStatus, runErr.Error())
		}
		return nil, fail(ProbeStartFailed, runErr.Error())
	}
	if stdout.truncated {
		// A manifest never comes near 1 MiB; the daemon would see a cut-off
		// document, so treat the overflow itself as the failure.
		return nil, fail(ProbeOverCap, "")
	}
	m, f, detail := parseManifest(stdout.Bytes())
	if f != "" {
		return nil, fail(f, detail)
	}
	if opts.Schemas != nil {
		if err := opts.Schemas.ValidateManifest(m.Raw); err != nil {
			return nil, fail(ProbeSchema, err.Error())
		}
	}
	return m, nil
}

// parseManifest applies the daemon's acceptance rule: all of stdout is one
// JSON object (JSON whitespace around it is fine), and the five identity
// fields are present as strings.
func parseManifest(out []byte) (*Manifest, ProbeFailure, string) {
	raw := bytes.Trim(out, " \t\r\n")
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return nil, ProbeNotOneValue, fmt.Sprintf("%q", clip(out, 200))
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, ProbeNotOneValue, err.Error()
	}
	for _, k := range []string{"name", "version", "plugin_kind", "description", "protocol_version"} {
		v, ok := fields[k]
		if !ok || len(v) == 0 || v[0] != '"' {
			return nil, ProbeMissing, k
		}
	}
	var wire struct {
		Name                   string           `json:"name"`
		Version                string           `json:"version"`
		PluginKind             string           `json:"plugin_kind"`
		Description            string           `json:"description"`
		ProtocolVersion        string           `json:"protocol_version"`
		Capabilities           []string         `json:"capabilities"`
		PluginKinds            []string         `json:"plugin_kinds"`
		EnvRequired            []EnvRequirement `json:"env_required"`
		NotificationBufferSize *uint64          `json:"notification_buffer_size"`
		SupportsMCP            *bool            `json:"supports_mcp"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, ProbeDecode, err.Error()
	}
	return &Manifest{
		Name: wire.Name, Version: wire.Version, PluginKind: wire.PluginKind,
		Description: wire.Description, ProtocolVersion: wire.ProtocolVersion,
		Capabilities: wire.Capabilities, PluginKinds: wire.PluginKinds,
		EnvRequired: wire.EnvRequired, NotificationBufferSize: wire.NotificationBufferSize,
		SupportsMCP: wire.SupportsMCP, Raw: append(json.RawMessage(nil), raw...),
	}, "", ""
}

// capBuffer keeps the first max bytes and swallows the rest, so a chatty child
// never blocks on a full pipe while we still know it overflowed.
type capBuffer struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	max       int
	truncated bool
}

func (c *capBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room < len(p) {
		c.truncated = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capBuffer) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.buf.Bytes()...)
}

func clip(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
