package config

import (
	"strings"
	"testing"
	"time"
)

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    Config
		wantErr string
	}{
		{"defaults", nil, Config{BusyTimeout: DefaultBusyTimeout, AuditRetention: DefaultAuditRetention, TicketTTL: DefaultTicketTTL}, ""},
		{"all set", map[string]string{EnvDBPath: " q.db ", EnvBusyTimeoutMS: "250", EnvLeaseTTLSecs: "60", EnvAuditRetention: "0"},
			Config{DBPath: "q.db", BusyTimeout: 250 * time.Millisecond, LeaseTTL: time.Minute, TicketTTL: time.Minute}, ""},
		{"ttl 0 is off, tickets default", map[string]string{EnvLeaseTTLSecs: "0"}, Config{BusyTimeout: DefaultBusyTimeout, AuditRetention: DefaultAuditRetention, TicketTTL: DefaultTicketTTL}, ""},
		{"ttl above a week: tickets default", map[string]string{EnvLeaseTTLSecs: "604801"},
			Config{BusyTimeout: DefaultBusyTimeout, AuditRetention: DefaultAuditRetention, LeaseTTL: 604801 * time.Second, TicketTTL: DefaultTicketTTL}, ""},
		{"ttl a week", map[string]string{EnvLeaseTTLSecs: "604800"},
			Config{BusyTimeout: DefaultBusyTimeout, AuditRetention: DefaultAuditRetention, LeaseTTL: MaxTicketTTL, TicketTTL: MaxTicketTTL}, ""},
		{"busy timeout 0", map[string]string{EnvBusyTimeoutMS: "0"}, Config{}, EnvBusyTimeoutMS + " must be at least 1"},
		{"negative ttl falls back", map[string]string{EnvLeaseTTLSecs: "-5"}, Config{BusyTimeout: DefaultBusyTimeout, AuditRetention: DefaultAuditRetention, TicketTTL: DefaultTicketTTL}, ""},
		{"junk ttl falls back", map[string]string{EnvLeaseTTLSecs: "30s"}, Config{BusyTimeout: DefaultBusyTimeout, AuditRetention: DefaultAuditRetention, TicketTTL: DefaultTicketTTL}, ""},
		{"padded ttl", map[string]string{EnvLeaseTTLSecs: " 120 "}, Config{BusyTimeout: DefaultBusyTimeout, AuditRetention: DefaultAuditRetention, LeaseTTL: 2 * time.Minute, TicketTTL: 2 * time.Minute}, ""},
		{"negative", map[string]string{EnvAuditRetention: "-5"}, Config{}, EnvAuditRetention},
		{"not a number", map[string]string{EnvAuditRetention: "30d"}, Config{}, EnvAuditRetention},
		{"too large", map[string]string{EnvBusyTimeoutMS: "99999999999"}, Config{}, EnvBusyTimeoutMS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromEnv(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestResolveDB(t *testing.T) {
	tests := []struct{ configured, root, want string }{
		{"", "/p", "/p/.animus/queue.sqlite"},
		{"state/q.db", "/p", "/p/state/q.db"},
		{"/var/q.db", "/p", "/var/q.db"},
		{"../shared/q.db", "/p/a", "/p/shared/q.db"},
	}
	for _, tt := range tests {
		if got := (Config{DBPath: tt.configured}).ResolveDB(tt.root); got != tt.want {
			t.Errorf("ResolveDB(%q, %q) = %q, want %q", tt.configured, tt.root, got, tt.want)
		}
	}
}

func TestEnvDeclaresEveryVariable(t *testing.T) {
	declared := map[string]bool{}
	for _, e := range Env {
		declared[e.Name] = true
		if e.Sensitive || e.Description == "" {
			t.Errorf("%s: sensitive=%v description=%q", e.Name, e.Sensitive, e.Description)
		}
	}
	for _, name := range []string{EnvDBPath, EnvBusyTimeoutMS, EnvLeaseTTLSecs, EnvAuditRetention} {
		if !declared[name] {
			t.Errorf("%s is read but not declared in env_required (the daemon would scrub it)", name)
		}
	}
}
