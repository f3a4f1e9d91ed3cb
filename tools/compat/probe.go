package compat

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// callTimeout bounds each probe call; a refusal is answered at once, so
// only a hung plugin ever waits this long.
const callTimeout = 10 * time.Second

// MethodResult is what one spec method got from the binary.
type MethodResult struct {
	SpecMethod
	Name       string // resolved wire name
	Advertised bool   // listed in initialize's capabilities.methods
	// For methods not advertised, the outcome of really calling them with
	// params {}: a result (Answered) or an error code and data.category.
	Called   bool
	Answered bool
	Code     int
	Category string
}

// Probe is everything learned from one binary over the wire.
type Probe struct {
	Manifest    *fakehost.Manifest
	Init        *fakehost.InitializeResult
	SubjectKind string // first subject kind, for kind-scoped methods
	Methods     []MethodResult
	Beyond      []string // advertised methods the spec tables do not list, sorted
	CapStrings  []string // advertised capability strings that are not methods ("subject_kind:task"), sorted
	// Exit is how the caller's shutdown ladder ended the process.
	Exit string
}

// probeBinary runs --manifest, a real handshake with the caller's preset,
// calls every spec method the plugin does not advertise and shuts down
// with the caller's ladder. What each daemon line makes of the binary is
// measureLines's.
func probeBinary(ctx context.Context, p Plugin, binary string, env map[string]string, schemas *schemacheck.Set) (*Probe, error) {
	man, err := fakehost.Probe(ctx, binary, fakehost.ProbeOptions{Env: env, Schemas: schemas})
	if err != nil {
		return nil, fmt.Errorf("--manifest: %w", err)
	}
	pr := &Probe{Manifest: man}
	err = withHost(ctx, binary, env, schemas, man, fakehost.Daemon{}, func(h *fakehost.Host) error {
		if pr.Init, err = h.Initialize(ctx, fakehost.Handshake{Preset: p.Preset}); err != nil {
			return fmt.Errorf("initialize (%s preset): %w", p.Preset, err)
		}
		pr.SubjectKind = subjectKind(pr.Init)
		if err := pr.callMethods(ctx, h, p.Kind); err != nil {
			return err
		}
		rep, err := h.Shutdown(ctx, p.Ladder)
		if err != nil {
			return fmt.Errorf("shutdown: %w", err)
		}
		pr.Exit = describeExit(p.Ladder, rep)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return pr, nil
}

// withHost spawns the binary as daemon's line does (scrubbed environment
// plus env_required, cwd a fresh project directory) and always reaps it. Any
// wire violation the fake host saw fails the probe: the matrix must not
// describe a binary that breaks the protocol as if it were fine.
func withHost(ctx context.Context, binary string, env map[string]string, schemas *schemacheck.Set, man *fakehost.Manifest, daemon fakehost.Daemon, fn func(*fakehost.Host) error) error {
	dir, err := os.MkdirTemp("", "animus-compat-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real // the daemon canonicalises project roots
	}
	h, err := fakehost.Start(ctx, fakehost.Config{
		Binary: binary, Dir: dir, EnvMode: fakehost.EnvDaemon, Env: env,
		Declared: man.EnvNames(), Schemas: schemas, Daemon: daemon,
	})
	if err != nil {
		return err
	}
	defer h.Close()
	if err := fn(h); err != nil {
		return fmt.Errorf("%w\nwire log:\n%s\nstderr:\n%s", err, h.WireLog(), h.Stderr())
	}
	if v := h.Violations(); len(v) > 0 {
		return fmt.Errorf("wire violations: %s", strings.Join(v, "; "))
	}
	return nil
}

func (pr *Probe) callMethods(ctx context.Context, h *fakehost.Host, kind string) error {
	listed := map[string]bool{}
	for _, m := range SpecMethods(kind) {
		r := MethodResult{SpecMethod: m, Name: m.Resolve(pr.SubjectKind)}
		listed[r.Name] = true
		r.Advertised = slices.Contains(pr.Init.Capabilities.Methods, r.Name)
		if !r.Advertised {
			cctx, cancel := context.WithTimeout(ctx, callTimeout)
			resp, err := h.Call(cctx, r.Name, map[string]any{})
			cancel()
			if err != nil {
				return fmt.Errorf("calling %s: %w", r.Name, err)
			}
			r.Called = true
			if resp.Error == nil {
				r.Answered = true
			} else {
				r.Code, r.Category = resp.Error.Code, resp.Error.Category()
			}
		}
		pr.Methods = append(pr.Methods, r)
	}
	for _, m := range pr.Init.Capabilities.Methods {
		switch {
		case listed[m]:
		case strings.Contains(m, ":") || strings.HasPrefix(m, "$"):
			// Capability strings share the list (spec §8.6.1).
			pr.CapStrings = append(pr.CapStrings, m)
		default:
			pr.Beyond = append(pr.Beyond, m)
		}
	}
	sort.Strings(pr.Beyond)
	sort.Strings(pr.CapStrings)
	return nil
}

// subjectKind is the kind kind-scoped subject methods are probed under:
// the first of capabilities.subject_kinds, else the reference's "task".
func subjectKind(res *fakehost.InitializeResult) string {
	if len(res.Capabilities.SubjectKinds) > 0 {
		return res.Capabilities.SubjectKinds[0]
	}
	return "task"
}

func describeExit(l fakehost.Ladder, rep *fakehost.ExitReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s ladder: ", l)
	if rep.ExitedByItself {
		fmt.Fprintf(&b, "exited by itself with code %d", rep.ExitCode)
	} else {
		b.WriteString("had to be killed")
	}
	if l == fakehost.LadderTransport {
		if rep.TransportShutdownTolerated {
			b.WriteString("; `transport/shutdown` before `transport/start` tolerated")
		} else {
			b.WriteString("; `transport/shutdown` before `transport/start` not tolerated")
		}
	}
	return b.String()
}
