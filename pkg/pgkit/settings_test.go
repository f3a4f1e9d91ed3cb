package pgkit_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
)

func TestLoadSettings(t *testing.T) {
	const dsn = "postgres://u:s3cret@db/x"
	defaults := pgkit.Settings{Schema: "animus", ConnectTimeout: 5 * time.Second, LockTimeout: 10 * time.Second}
	tests := []struct {
		name    string
		env     map[string]string
		want    pgkit.Settings
		wantErr string
	}{
		{"dsn only", map[string]string{"P_DSN": " " + dsn + " "}, pgkit.Settings{DSN: dsn, Schema: "animus", ConnectTimeout: 5 * time.Second, LockTimeout: 10 * time.Second}, ""},
		{"DATABASE_URL fallback", map[string]string{"DATABASE_URL": dsn}, pgkit.Settings{DSN: dsn, Schema: "animus", ConnectTimeout: 5 * time.Second, LockTimeout: 10 * time.Second}, ""},
		{"the prefixed DSN wins", map[string]string{"P_DSN": dsn, "DATABASE_URL": "postgres://other"}, pgkit.Settings{DSN: dsn, Schema: "animus", ConnectTimeout: 5 * time.Second, LockTimeout: 10 * time.Second}, ""},
		{"all set", map[string]string{"P_DSN": dsn, "P_SCHEMA": "team_a", "P_CONNECT_TIMEOUT_MS": "250", "P_LOCK_TIMEOUT_MS": "100"},
			pgkit.Settings{DSN: dsn, Schema: "team_a", ConnectTimeout: 250 * time.Millisecond, LockTimeout: 100 * time.Millisecond}, ""},
		{"no DSN", nil, pgkit.Settings{}, "P_DSN"},
		{"bad schema", map[string]string{"P_DSN": dsn, "P_SCHEMA": "Team"}, pgkit.Settings{}, "P_SCHEMA"},
		{"zero timeout", map[string]string{"P_DSN": dsn, "P_CONNECT_TIMEOUT_MS": "0"}, pgkit.Settings{}, "P_CONNECT_TIMEOUT_MS"},
		{"junk timeout", map[string]string{"P_DSN": dsn, "P_LOCK_TIMEOUT_MS": "5s"}, pgkit.Settings{}, "P_LOCK_TIMEOUT_MS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pgkit.LoadSettings(func(k string) string { return tt.env[k] }, "P", defaults)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "s3cret") {
					t.Fatalf("error %v, want one naming %s without the password", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	if _, err := pgkit.LoadSettings(func(string) string { return "" }, "P", defaults); !errors.Is(err, pgkit.ErrNoDSN) {
		t.Errorf("no DSN: %v, want ErrNoDSN", err)
	}
	for _, s := range pgkit.SettingsEnv("P", "queue", defaults) {
		if s.Sensitive != (s.Name == "P_DSN" || s.Name == "DATABASE_URL") || s.Description == "" {
			t.Errorf("%+v", s)
		}
	}
}
