package logstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/loki"
)

// Health checks Loki: GET /ready, or the labels endpoint when a gateway
// (Grafana Cloud) answers 404 for /ready, which also proves the
// credentials. 401/403 and an unreachable Loki are unhealthy; 429, 5xx
// and recent push failures are degraded.
func (s *Service) Health(ctx context.Context) pluginkit.HealthReport {
	c, err := s.ready()
	if err != nil {
		return pluginkit.HealthReport{Status: pluginkit.Unhealthy, LastError: s.unavailable}
	}
	ctx, cancel := context.WithTimeout(ctx, healthBudget)
	defer cancel()
	err = c.Ready(ctx)
	var se *loki.StatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		err = c.Labels(ctx)
	}
	switch {
	case err == nil:
		if msg := s.recentFailure(); msg != "" {
			return pluginkit.HealthReport{Status: pluginkit.Degraded, LastError: "recent push failure: " + msg}
		}
		return pluginkit.HealthReport{Status: pluginkit.Healthy}
	case errors.As(err, &se) && (se.Status == http.StatusUnauthorized || se.Status == http.StatusForbidden):
		return pluginkit.HealthReport{Status: pluginkit.Unhealthy,
			LastError: fmt.Sprintf("Loki refused the credentials (HTTP %d); check LOKI_USERNAME/LOKI_PASSWORD, LOKI_BEARER_TOKEN and LOKI_TENANT_ID", se.Status)}
	case errors.As(err, &se) && (se.Status == http.StatusTooManyRequests || se.Status >= 500):
		return pluginkit.HealthReport{Status: pluginkit.Degraded, LastError: fmt.Sprintf("Loki answered %d: %s", se.Status, clip(se.Message))}
	case errors.As(err, &se):
		return pluginkit.HealthReport{Status: pluginkit.Unhealthy, LastError: fmt.Sprintf("Loki answered %d: %s", se.Status, clip(se.Message))}
	default:
		return pluginkit.HealthReport{Status: pluginkit.Unhealthy, LastError: "Loki unreachable: " + transportReason(err)}
	}
}
