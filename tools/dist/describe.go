package dist

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// Description is what a plugin binary says about itself: its manifest (as
// the daemon's discovery probe reads it) and its initialize reply.
type Description struct {
	Manifest *fakehost.Manifest
	Init     *fakehost.InitializeResult
}

// describeEnv is, per binary, the environment its handshake is spawned
// with: settings the plugin refuses to start serving without, pointing
// nowhere. The generic handshake opens nothing (the PostgreSQL plugins
// only parse their DSN before initialize and dial
// on the first domain call), so no service needs to exist; `--manifest`
// still runs with none.
var describeEnv = map[string]map[string]string{
	"animus-queue-postgres":   {"ANIMUS_QUEUE_PG_DSN": "postgres://animus-dist.invalid/animus"},
	"animus-durable-postgres": {"ANIMUS_DURABLE_PG_DSN": "postgres://animus-dist.invalid/animus"},
	"animus-subject-postgres": {"ANIMUS_SUBJECT_PG_DSN": "postgres://animus-dist.invalid/animus"},
}

// Describe probes binary the way the daemon does (`--manifest` with a
// scrubbed environment, then a spawn and the generic host's handshake,
// with describeEnv's settings) and checks that the two answers agree with
// each other and with wantVersion. An empty wantVersion skips the version
// check.
func Describe(ctx context.Context, binary, wantVersion string) (*Description, error) {
	m, err := fakehost.Probe(ctx, binary, fakehost.ProbeOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", binary, err)
	}
	h, err := fakehost.Start(ctx, fakehost.Config{Binary: binary, Declared: m.EnvNames(), Env: describeEnv[filepath.Base(binary)]})
	if err != nil {
		return nil, fmt.Errorf("%s: spawn: %w", binary, err)
	}
	// Close kills the child: release metadata needs only the handshake, and
	// the shutdown ladder is the conformance suite's business.
	defer h.Close()
	init, err := h.Initialize(ctx, fakehost.Handshake{Preset: fakehost.PresetDaemon})
	if err != nil {
		return nil, fmt.Errorf("%s: initialize: %w\nstderr:\n%s", binary, err, h.Stderr())
	}
	d := &Description{Manifest: m, Init: init}
	if err := d.check(wantVersion); err != nil {
		return nil, fmt.Errorf("%s: %w", binary, err)
	}
	return d, nil
}

// check reports the first disagreement between the manifest, the handshake
// and the expected version.
func (d *Description) check(wantVersion string) error {
	m, info := d.Manifest, d.Init.PluginInfo
	pairs := []struct{ what, manifest, init string }{
		{"name", m.Name, info.Name},
		{"version", m.Version, info.Version},
		{"plugin_kind", m.PluginKind, info.PluginKind},
	}
	for _, p := range pairs {
		if p.manifest != p.init {
			return fmt.Errorf("manifest %s %q differs from initialize's %q", p.what, p.manifest, p.init)
		}
	}
	if wantVersion != "" && m.Version != wantVersion {
		return fmt.Errorf("binary reports version %q, the build was stamped %q (LDFLAGS not applied?)", m.Version, wantVersion)
	}
	for _, method := range d.Init.Capabilities.Methods {
		if !slices.Contains(m.Capabilities, method) {
			return fmt.Errorf("initialize advertises %q, the manifest does not", method)
		}
	}
	return nil
}

// Methods are the manifest's capabilities without the marker strings
// (subject_kind:<kind>, $harness/..., $ui/...), which name no method.
func (d *Description) Methods() []string {
	var out []string
	for _, c := range d.Manifest.Capabilities {
		if strings.HasPrefix(c, "$") || strings.HasPrefix(c, "subject_kind:") {
			continue
		}
		out = append(out, c)
	}
	return out
}

// SubjectKinds are the kinds a subject backend serves: the handshake's
// subject_kinds, else the manifest's subject_kind:<kind> markers (which is
// what the daemon's router reads).
func (d *Description) SubjectKinds() []string {
	if len(d.Init.Capabilities.SubjectKinds) > 0 {
		return d.Init.Capabilities.SubjectKinds
	}
	var out []string
	for _, c := range d.Manifest.Capabilities {
		if k, ok := strings.CutPrefix(c, "subject_kind:"); ok {
			out = append(out, k)
		}
	}
	return out
}
