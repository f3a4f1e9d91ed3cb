package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/subjects"
)

func TestLoad(t *testing.T) {
	const dsn = "postgres://animus:s3cret@db/animus"
	def := subjects.DefaultRules()
	tests := []struct {
		name    string
		env     map[string]string
		want    Config
		wantErr string
	}{
		{"dsn only", map[string]string{EnvDSN: dsn},
			Config{Settings: pgkit.Settings{DSN: dsn, Schema: "animus", ConnectTimeout: 5 * time.Second, LockTimeout: 5 * time.Second}, Rules: def}, ""},
		{"all set", map[string]string{EnvDatabaseURL: dsn, EnvSchema: "team", EnvLockTimeoutMS: "250", EnvKinds: "task, issue", EnvWatchPollMS: "1000"},
			Config{Settings: pgkit.Settings{DSN: dsn, Schema: "team", ConnectTimeout: 5 * time.Second, LockTimeout: 250 * time.Millisecond},
				Rules: subjects.Rules{Kinds: []string{"task", "issue"}, WatchPoll: time.Second}}, ""},
		{"no DSN", nil, Config{}, EnvDSN},
		{"bad schema", map[string]string{EnvDSN: dsn, EnvSchema: "pg_catalog"}, Config{}, EnvSchema},
		{"bad kind", map[string]string{EnvDSN: dsn, EnvKinds: "a/b"}, Config{}, EnvKinds},
		{"bad hints", map[string]string{EnvDSN: dsn, EnvDispatchHints: "{"}, Config{}, EnvDispatchHints},
	}
	for _, tt := range tests {
		got, err := Load(func(k string) string { return tt.env[k] })
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("%s: %v, want an error naming %s without the password", tt.name, err, tt.wantErr)
			}
			if len(got.Kinds) == 0 {
				t.Errorf("%s: a bad value left no usable kinds", tt.name)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %+v %v\nwant %+v", tt.name, got, err, tt.want)
		}
	}
	if _, err := Load(func(string) string { return "" }); !errors.Is(err, pgkit.ErrNoDSN) {
		t.Errorf("no DSN: %v", err)
	}
}

func TestEnvDeclaresEveryVariable(t *testing.T) {
	declared := map[string]bool{}
	for _, e := range Env {
		declared[e.Name] = true
		if e.Sensitive != (e.Name == EnvDSN || e.Name == EnvDatabaseURL) || e.Required || e.Description == "" {
			t.Errorf("%+v", e)
		}
	}
	for _, name := range []string{EnvDSN, EnvDatabaseURL, EnvSchema, EnvConnectTimeoutMS, EnvLockTimeoutMS, EnvKinds, EnvDispatchHints, EnvWatchPollMS} {
		if !declared[name] {
			t.Errorf("%s is read but not declared in env_required", name)
		}
	}
}
