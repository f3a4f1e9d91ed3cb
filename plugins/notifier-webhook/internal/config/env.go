package config

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// EnvVars is env_required: every variable the plugin reads by its own
// name. Variables named by *_env keys in notification_config reach the
// plugin through the daemon's *_env forwarding and are not listed.
var EnvVars = []pluginkit.EnvVar{
	{Name: EnvConfigPath, Description: "path of a JSON file holding notification_config (default: the daemon's pm-config.json)"},
	{Name: EnvDBPath, Description: "outbox database (default: <project>/.animus/notifier.sqlite)"},
	{Name: EnvWebhookURL, Description: "quick start without a config file: one webhook receiving every event", Sensitive: true},
	{Name: EnvSecret, Description: "quick start: Standard Webhooks signing secret (whsec_<base64> or any string)", Sensitive: true},
}

// Preflight fails the start on configuration that can never work, so the
// operator sees it at once instead of in every notify's error: an
// ANIMUS_NOTIFIER_CONFIG file that does not load, or an ANIMUS_WEBHOOK_URL
// that is not an http(s) URL. Messages never include values.
func Preflight(context.Context) error {
	return preflight(os.Getenv)
}

func preflight(getenv func(string) string) error {
	if p := getenv(EnvConfigPath); p != "" {
		l := &Loader{Getenv: getenv}
		if _, err := l.Load("."); err != nil {
			return err
		}
	}
	if raw := strings.TrimSpace(getenv(EnvWebhookURL)); raw != "" {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s is not an absolute http(s) URL", EnvWebhookURL)
		}
	}
	return nil
}
