package config

import (
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/queuekit/queue"
)

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    Config
		wantErr string
	}{
		{"defaults", nil, Config{BusyTimeout: DefaultBusyTimeout, Rules: queue.Rules{AuditRetention: queue.DefaultAuditRetention, TicketTTL: queue.DefaultTicketTTL}}, ""},
		{"all set", map[string]string{EnvDBPath: " q.db ", EnvBusyTimeoutMS: "250", queue.EnvLeaseTTLSecs: "60", queue.EnvAuditRetention: "0"},
			Config{DBPath: "q.db", BusyTimeout: 250 * time.Millisecond, Rules: queue.Rules{LeaseTTL: time.Minute, TicketTTL: time.Minute}}, ""},
		{"ttl 0 is off, tickets default", map[string]string{queue.EnvLeaseTTLSecs: "0"}, Config{BusyTimeout: DefaultBusyTimeout, Rules: queue.Rules{AuditRetention: queue.DefaultAuditRetention, TicketTTL: queue.DefaultTicketTTL}}, ""},
		{"ttl above a week: tickets default", map[string]string{queue.EnvLeaseTTLSecs: "604801"},
			Config{BusyTimeout: DefaultBusyTimeout, Rules: queue.Rules{AuditRetention: queue.DefaultAuditRetention, LeaseTTL: 604801 * time.Second, TicketTTL: queue.DefaultTicketTTL}}, ""},
		{"ttl a week", map[string]string{queue.EnvLeaseTTLSecs: "604800"},
			Config{BusyTimeout: DefaultBusyTimeout, Rules: queue.Rules{AuditRetention: queue.DefaultAuditRetention, LeaseTTL: queue.MaxTicketTTL, TicketTTL: queue.MaxTicketTTL}}, ""},
		{"busy timeout 0", map[string]string{EnvBusyTimeoutMS: "0"}, Config{}, EnvBusyTimeoutMS + " must be at least 1"},
		{"negative ttl falls back", map[string]string{queue.EnvLeaseTTLSecs: "-5"}, Config{BusyTimeout: DefaultBusyTimeout, Rules: queue.Rules{AuditRetention: queue.DefaultAuditRetention, TicketTTL: queue.DefaultTicketTTL}}, ""},
		{"junk ttl falls back", map[string]string{queue.EnvLeaseTTLSecs: "30s"}, Config{BusyTimeout: DefaultBusyTimeout, Rules: queue.Rules{AuditRetention: queue.DefaultAuditRetention, TicketTTL: queue.DefaultTicketTTL}}, ""},
		{"padded ttl", map[string]string{queue.EnvLeaseTTLSecs: " 120 "}, Config{BusyTimeout: DefaultBusyTimeout, Rules: queue.Rules{AuditRetention: queue.DefaultAuditRetention, LeaseTTL: 2 * time.Minute, TicketTTL: 2 * time.Minute}}, ""},
		{"negative", map[string]string{queue.EnvAuditRetention: "-5"}, Config{}, queue.EnvAuditRetention},
		{"not a number", map[string]string{queue.EnvAuditRetention: "30d"}, Config{}, queue.EnvAuditRetention},
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
	for _, name := range []string{EnvDBPath, EnvBusyTimeoutMS, queue.EnvLeaseTTLSecs, queue.EnvAuditRetention} {
		if !declared[name] {
			t.Errorf("%s is read but not declared in env_required (the daemon would scrub it)", name)
		}
	}
}
