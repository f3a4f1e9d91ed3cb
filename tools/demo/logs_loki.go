package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
)

// logsLokiScript walks animus-logs-loki through what the daemon does with
// a log-storage backend (logs-loki.md §3): one log_storage/store per
// daemon event, projected as the daemon projects it, then the
// daemon/logs read (query, limit 200, newest kept, oldest first) with and
// without since, and a follow:false tail, against a local fake Loki.
func logsLokiScript() Script {
	return Script{
		Binary: "animus-logs-loki",
		Kind:   "log_storage_backend",
		Title:  "animus-logs-loki: the daemon's event log in Grafana Loki",
		Run:    runLogsLoki,
	}
}

type demoLogEntry struct {
	ID      string `json:"id"`
	TS      string `json:"ts"`
	Level   string `json:"level"`
	Source  string `json:"source"`
	Target  string `json:"target"`
	Message string `json:"message"`
}

func runLogsLoki(ctx context.Context, d *Demo) (string, error) {
	loki, err := fakeloki.Start(fakeloki.Options{})
	if err != nil {
		return "", err
	}
	defer loki.Close()

	d.Step("A local fake Loki at %s; the plugin is spawned with LOKI_URL pointing at it", loki.URL())
	h, err := d.Spawn(ctx, "animus-logs-loki", func(c *fakehost.Config) {
		c.Dir, c.Env = "", map[string]string{"LOKI_URL": loki.URL()}
	})
	if err != nil {
		return "", err
	}
	if _, err := h.Initialize(ctx, fakehost.Handshake{Preset: fakehost.PresetDaemon}); err != nil {
		d.Frames(h)
		return "", err
	}
	d.Frames(h)
	var health struct {
		Status string `json:"status"`
	}
	if err := d.Result(ctx, h, "health/check", nil, &health); err != nil {
		return "", err
	}
	if err := d.Expect(health.Status == "healthy", "Loki answers /ready: %s", health.Status); err != nil {
		return "", err
	}

	d.Step("The daemon tees each event into log_storage/store, one entry per call (source daemon, target daemon.events.<type>, +00:00 timestamps)")
	base := time.Now().UTC().Add(-time.Minute).Truncate(time.Millisecond)
	events := []string{"daemon-started", "task-created", "workflow-started", "workflow-phase-completed", "task-status-changed"}
	var ids []string
	for i, typ := range events {
		id := fmt.Sprintf("0b3c1f2e-5a6d-4e7f-8a9b-%012d", i+1)
		ids = append(ids, id)
		entry := map[string]any{
			"id": id, "ts": base.Add(time.Duration(i)*time.Second).Format("2006-01-02T15:04:05.000000") + "+00:00",
			"level": "info", "source": "daemon", "target": "daemon.events." + typ, "message": typ,
			"fields": map[string]any{"seq": i + 1, "data": map[string]any{}, "schema": "animus.daemon.event.v1", "project_root": "/srv/project"},
		}
		var res struct {
			Stored int `json:"stored"`
		}
		if err := d.Result(ctx, h, "log_storage/store", map[string]any{"entries": []any{entry}}, &res); err != nil {
			return "", err
		}
		if res.Stored != 1 {
			return "", d.Expect(false, "stored %d, want 1", res.Stored)
		}
	}
	if err := d.Expect(loki.Entries("fake") == len(events), "Loki holds %d entries in one stream {service_name=\"animus\", source=\"daemon\", level=\"info\"}", loki.Entries("fake")); err != nil {
		return "", err
	}

	d.Step("daemon/logs: log_storage/query {limit: 200} — the newest 200 matches, oldest first")
	var q struct {
		Entries    []demoLogEntry `json:"entries"`
		NextCursor *string        `json:"next_cursor"`
	}
	if err := d.Result(ctx, h, "log_storage/query", map[string]any{"limit": 200}, &q); err != nil {
		return "", err
	}
	if err := d.Expect(sameIDs(q.Entries, ids) && q.NextCursor == nil, "%d entries, oldest first, no next_cursor", len(q.Entries)); err != nil {
		return "", err
	}

	d.Step("daemon/logs with a level and a start time: {limit: 200, min_level: info, since: <third event>}")
	since := base.Add(2 * time.Second).Format(time.RFC3339Nano)
	if err := d.Result(ctx, h, "log_storage/query", map[string]any{"limit": 200, "min_level": "info", "since": since}, &q); err != nil {
		return "", err
	}
	if err := d.Expect(sameIDs(q.Entries, ids[2:]), "%d entries from %s on (since is inclusive)", len(q.Entries), since); err != nil {
		return "", err
	}

	d.Step("log_storage/tail {target_glob: daemon.events.workflow-*, follow: false}: replay the backlog, then end")
	resp, err := d.Call(ctx, h, "log_storage/tail", map[string]any{"target_glob": "daemon.events.workflow-*", "follow": false})
	if err != nil {
		return "", err
	}
	if err := d.Expect(resp.Error == nil && string(resp.Result) == `{"tailing":true}`, "tail acknowledged: %s", resp.Result); err != nil {
		return "", err
	}
	var tailed []string
	deadline := time.Now().Add(5 * time.Second)
	for len(tailed) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		tailed = tailedIDs(h, resp.ID)
	}
	d.Frames(h)
	if err := d.Expect(len(tailed) == 2 && tailed[0] == ids[2] && tailed[1] == ids[3],
		"%d log_storage/event notifications carrying the tail's id %s", len(tailed), resp.ID); err != nil {
		return "", err
	}

	d.Step("Shutdown, as the daemon stops")
	rep, err := h.Shutdown(ctx, fakehost.LadderDaemon)
	d.Frames(h)
	if err != nil {
		return "", err
	}
	if err := d.Expect(rep.ExitedByItself && rep.ExitCode == 0, "exited by itself with code 0, %v after shutdown", rep.Elapsed.Round(time.Millisecond)); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d events stored, read back as daemon/logs does (newest 200, oldest first), replayed by a tail", len(events)), nil
}

func sameIDs(es []demoLogEntry, ids []string) bool {
	if len(es) != len(ids) {
		return false
	}
	for i := range es {
		if es[i].ID != ids[i] {
			return false
		}
	}
	return true
}

// tailedIDs lists the entry ids of log_storage/event notifications for
// tail id.
func tailedIDs(h *fakehost.Host, id json.RawMessage) []string {
	var out []string
	for _, n := range h.Notifications() {
		var p struct {
			ID    json.RawMessage `json:"id"`
			Entry *demoLogEntry   `json:"entry"`
		}
		if n.Method == "log_storage/event" && json.Unmarshal(n.Params, &p) == nil && string(p.ID) == string(id) && p.Entry != nil {
			out = append(out, p.Entry.ID)
		}
	}
	return out
}
