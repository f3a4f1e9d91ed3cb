package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/queue"
)

func TestFromEnv(t *testing.T) {
	const dsn = "postgres://animus:s3cret@db:5432/animus"
	defaults := func(c Config) Config {
		if c.Schema == "" {
			c.Schema = DefaultSchema
		}
		if c.ConnectTimeout == 0 {
			c.ConnectTimeout = DefaultConnectTimeout
		}
		if c.LockTimeout == 0 {
			c.LockTimeout = DefaultLockTimeout
		}
		if c.Rules == (queue.Rules{}) {
			c.Rules = queue.Rules{TicketTTL: queue.DefaultTicketTTL, AuditRetention: queue.DefaultAuditRetention}
		}
		return c
	}
	tests := []struct {
		name    string
		env     map[string]string
		want    Config
		wantErr string
	}{
		{"dsn only", map[string]string{EnvDSN: " " + dsn + " "}, defaults(Config{Settings: pgkit.Settings{DSN: dsn}}), ""},
		{"DATABASE_URL when the DSN is unset", map[string]string{EnvDatabaseURL: dsn}, defaults(Config{Settings: pgkit.Settings{DSN: dsn}}), ""},
		{"the DSN wins", map[string]string{EnvDSN: dsn, EnvDatabaseURL: "postgres://other"}, defaults(Config{Settings: pgkit.Settings{DSN: dsn}}), ""},
		{"all set", map[string]string{EnvDSN: dsn, EnvSchema: "team_a", EnvConnectTimeoutMS: "250", EnvLockTimeoutMS: "100", queue.EnvLeaseTTLSecs: "60"},
			defaults(Config{Settings: pgkit.Settings{DSN: dsn, Schema: "team_a", ConnectTimeout: 250 * time.Millisecond, LockTimeout: 100 * time.Millisecond}, Rules: queue.Rules{LeaseTTL: time.Minute, TicketTTL: time.Minute, AuditRetention: queue.DefaultAuditRetention}}), ""},
		{"no DSN", nil, Config{}, EnvDSN},
		{"upper-case schema", map[string]string{EnvDSN: dsn, EnvSchema: "Animus"}, Config{}, EnvSchema},
		{"schema with a quote", map[string]string{EnvDSN: dsn, EnvSchema: `a"; drop`}, Config{}, EnvSchema},
		{"schema too long", map[string]string{EnvDSN: dsn, EnvSchema: strings.Repeat("a", 64)}, Config{}, EnvSchema},
		{"connect timeout 0", map[string]string{EnvDSN: dsn, EnvConnectTimeoutMS: "0"}, Config{}, EnvConnectTimeoutMS},
		{"junk lock timeout", map[string]string{EnvDSN: dsn, EnvLockTimeoutMS: "5s"}, Config{}, EnvLockTimeoutMS},
		{"junk retention", map[string]string{EnvDSN: dsn, queue.EnvAuditRetention: "-1"}, Config{}, queue.EnvAuditRetention},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromEnv(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one naming %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("error %q shows the password", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %+v, %v\nwant %+v", got, err, tt.want)
			}
		})
	}
	if _, err := FromEnv(func(string) string { return "" }); !errors.Is(err, ErrNoDSN) {
		t.Errorf("no DSN: %v, want ErrNoDSN", err)
	}
}

func TestEnvDeclaresEveryVariable(t *testing.T) {
	declared := map[string]bool{}
	for _, e := range Env {
		declared[e.Name] = true
		secret := e.Name == EnvDSN || e.Name == EnvDatabaseURL
		if e.Sensitive != secret || e.Required || e.Description == "" {
			t.Errorf("%s: sensitive=%v required=%v description=%q", e.Name, e.Sensitive, e.Required, e.Description)
		}
	}
	for _, name := range []string{EnvDSN, EnvDatabaseURL, EnvSchema, EnvConnectTimeoutMS, EnvLockTimeoutMS, queue.EnvLeaseTTLSecs, queue.EnvAuditRetention} {
		if !declared[name] {
			t.Errorf("%s is read but not declared in env_required (the daemon would scrub it)", name)
		}
	}
}
