package config

import (
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/durable"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestLoad(t *testing.T) {
	defaults := durable.DefaultRules()
	tests := []struct {
		name    string
		getenv  func(string) string
		want    Config
		wantErr string
	}{
		{"defaults", env(), Config{BusyTimeout: 10 * time.Second, Rules: defaults}, ""},
		{"all set", env(EnvDBPath, "/var/lib/d.sqlite", durable.EnvReservationTTL, "60", durable.EnvMaxPayloadBytes, "4096", EnvBusyTimeoutMS, "250"),
			Config{DBPath: "/var/lib/d.sqlite", BusyTimeout: 250 * time.Millisecond, Rules: durable.Rules{ReservationTTL: time.Minute, MaxPayloadBytes: 4096}}, ""},
		{"busy too short", env(EnvBusyTimeoutMS, "5"), Config{}, EnvBusyTimeoutMS},
		{"busy too long", env(EnvBusyTimeoutMS, "60000"), Config{}, EnvBusyTimeoutMS},
		{"a shared rule", env(durable.EnvReservationTTL, "soon"), Config{}, durable.EnvReservationTTL},
	}
	for _, tc := range tests {
		got, err := Load(tc.getenv)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %v, want an error naming %s", tc.name, err, tc.wantErr)
			}
			// The defaults stay usable for --manifest and the capabilities.
			if got.Rules != defaults || got.BusyTimeout != DefaultBusyTimeout {
				t.Errorf("%s: a bad value left %+v, want the defaults", tc.name, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v %v, want %+v", tc.name, got, err, tc.want)
		}
	}
}

// ANIMUS_DURABLE_DB_PATH wins; a relative one is taken from the project
// root.
func TestPath(t *testing.T) {
	for _, tc := range []struct{ override, root, want string }{
		{"", "/p", "/p/.animus/durable.sqlite"},
		{"state/durable.db", "/p", "/p/state/durable.db"},
		{"/var/lib/d.sqlite", "/p", "/var/lib/d.sqlite"},
	} {
		if got := (Config{DBPath: tc.override}).Path(tc.root); got != tc.want {
			t.Errorf("Path(%q, %q) = %q, want %q", tc.override, tc.root, got, tc.want)
		}
	}
}

func TestEnvDeclaresEveryVariable(t *testing.T) {
	declared := map[string]bool{}
	for _, e := range Env {
		declared[e.Name] = true
		if e.Sensitive || e.Required || e.Description == "" {
			t.Errorf("%s: sensitive=%v required=%v description=%q", e.Name, e.Sensitive, e.Required, e.Description)
		}
	}
	for _, name := range []string{EnvDBPath, EnvBusyTimeoutMS, durable.EnvReservationTTL, durable.EnvMaxPayloadBytes} {
		if !declared[name] {
			t.Errorf("%s is read but not declared in env_required", name)
		}
	}
}
