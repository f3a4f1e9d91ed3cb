package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// Session is one scenario's view of the target: it spawns fresh plugin
// processes, remembers them for evidence, and kills them at the end.
type Session struct {
	*Target
	mu      sync.Mutex // concurrency scenarios spawn from several goroutines
	hosts   []*fakehost.Host
	dirs    []string
	allowed []string
	// The scenario's store (Target.Isolate): made on first use, overlaid
	// on every process; cleanups run at close.
	store     map[string]string
	storeMade bool
	storeUsed bool // a queue project has claimed it (claimStore)
	cleanups  []func()
}

// env is the environment of the scenario's processes: the target's,
// overlaid with the scenario's store when the target isolates stores.
func (s *Session) env() (map[string]string, error) {
	if s.Isolate == nil {
		return s.Env, nil
	}
	s.mu.Lock()
	made := s.storeMade
	s.mu.Unlock()
	if !made {
		store, err := s.newStore()
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		if !s.storeMade { // another goroutine may have won
			s.store, s.storeMade = store, true
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return overlay(s.Env, s.store), nil
}

// claimStore is for a scenario's queue projects: the first one uses the
// scenario's store (nil overlay), every further one gets a fresh store of
// its own, as each gets a fresh project root. Without Target.Isolate it
// returns nil.
func (s *Session) claimStore() (map[string]string, error) {
	if s.Isolate == nil {
		return nil, nil
	}
	s.mu.Lock()
	first := !s.storeUsed
	s.storeUsed = true
	s.mu.Unlock()
	if first {
		return nil, nil
	}
	return s.newStore()
}

func (s *Session) newStore() (map[string]string, error) {
	env, cleanup, err := s.Isolate()
	if cleanup != nil {
		s.mu.Lock()
		s.cleanups = append(s.cleanups, cleanup)
		s.mu.Unlock()
	}
	if err != nil {
		return nil, fmt.Errorf("isolated store: %w", err)
	}
	return env, nil
}

// overlay returns base with each of overs laid on top, in order (a new map).
func overlay(base map[string]string, overs ...map[string]string) map[string]string {
	out := make(map[string]string, len(base))
	for k, v := range base {
		out[k] = v
	}
	for _, o := range overs {
		for k, v := range o {
			out[k] = v
		}
	}
	return out
}

// TempDir makes a directory (symlinks resolved, as the daemon canonicalises
// project roots) that is removed when the scenario ends, after its
// processes are gone.
func (s *Session) TempDir() (string, error) {
	dir, err := os.MkdirTemp("", "conformance-*")
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	s.dirs = append(s.dirs, dir)
	s.mu.Unlock()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return dir, nil
}

// Spawn starts a fresh process the way the daemon does (scrubbed
// environment plus env_required, cwd a fresh temp dir), with every frame
// validated. mutate may adjust the config.
func (s *Session) Spawn(ctx context.Context, mutate ...func(*fakehost.Config)) (*fakehost.Host, error) {
	env, err := s.env()
	if err != nil {
		return nil, err
	}
	cfg := fakehost.Config{
		Binary:   s.Binary,
		EnvMode:  fakehost.EnvDaemon,
		Env:      env,
		Declared: s.declared(),
		Schemas:  s.Schemas,
		Daemon:   s.Daemon,
	}
	for _, m := range mutate {
		m(&cfg)
	}
	h, err := fakehost.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.hosts = append(s.hosts, h)
	s.mu.Unlock()
	return h, nil
}

// SpawnReady spawns and completes the handshake.
func (s *Session) SpawnReady(ctx context.Context, hs fakehost.Handshake, mutate ...func(*fakehost.Config)) (*fakehost.Host, *fakehost.InitializeResult, error) {
	h, err := s.Spawn(ctx, mutate...)
	if err != nil {
		return nil, nil, err
	}
	res, err := h.Initialize(ctx, hs)
	if err != nil {
		return h, nil, err
	}
	return h, res, nil
}

func (s *Session) declared() []string {
	if s.Manifest == nil {
		return nil
	}
	names := s.Manifest.EnvNames()
	if names == nil {
		names = []string{}
	}
	return names
}

// Allow marks violations containing substr as expected by the scenario.
func (s *Session) Allow(substr string) { s.allowed = append(s.allowed, substr) }

// Advertises reports whether initialize listed method in capabilities.methods.
func (s *Session) Advertises(method string) bool {
	if s.Init == nil {
		return false
	}
	for _, m := range s.Init.Capabilities.Methods {
		if m == method {
			return true
		}
	}
	return false
}

// DomainMethod returns an advertised domain method (not health/check, not
// a marker string), or "" when the plugin advertises none.
func (s *Session) DomainMethod() string {
	if s.Init == nil {
		return ""
	}
	for _, m := range s.Init.Capabilities.Methods {
		if m != "health/check" && !strings.HasPrefix(m, "$") && !strings.Contains(m, ":") && strings.Contains(m, "/") {
			return m
		}
	}
	return ""
}

func (s *Session) violations() []string {
	var out []string
	for _, h := range s.hosts {
	next:
		for _, v := range h.Violations() {
			for _, a := range s.allowed {
				if strings.Contains(v, a) {
					continue next
				}
			}
			out = append(out, v)
		}
	}
	return out
}

func (s *Session) evidence() (wire, stderr string) {
	var w, e strings.Builder
	for i, h := range s.hosts {
		fmt.Fprintf(&w, "--- process %d (pid %d)\n%s\n", i+1, h.Pid(), h.WireLog())
		fmt.Fprintf(&e, "--- process %d\n%s", i+1, h.Stderr())
	}
	return w.String(), e.String()
}

func (s *Session) close() {
	for _, h := range s.hosts {
		h.Close()
	}
	for _, d := range s.dirs {
		os.RemoveAll(d)
	}
	for _, c := range s.cleanups {
		c()
	}
}

// call is Call with a per-call budget, returning a readable error for an
// RPC error as well as for a transport failure.
func call(ctx context.Context, h *fakehost.Host, budget time.Duration, method string, params any) (*fakehost.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	resp, err := h.Call(ctx, method, params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	return resp, nil
}

// wantError checks that resp is an error with the code (and, when given,
// the data.category).
func wantError(resp *fakehost.Response, code int, category string) error {
	if resp.Error == nil {
		return fmt.Errorf("got result %s, want error %d", clip(resp.Result), code)
	}
	if resp.Error.Code != code {
		return fmt.Errorf("got error %d %q, want code %d", resp.Error.Code, resp.Error.Message, code)
	}
	if category != "" && resp.Error.Category() != category {
		return fmt.Errorf("error %d has data.category %q, want %q", code, resp.Error.Category(), category)
	}
	return nil
}

// wantResult checks that resp is a success and decodes it into v (if non-nil).
func wantResult(resp *fakehost.Response, v any) error {
	if resp.Error != nil {
		return fmt.Errorf("%s returned error: %s (code %d)", resp.Method, resp.Error.Message, resp.Error.Code)
	}
	if v != nil {
		if err := json.Unmarshal(resp.Result, v); err != nil {
			return fmt.Errorf("%s result does not decode: %v", resp.Method, err)
		}
	}
	return nil
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
