package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// storyLokiTenant is the tenant fake Loki files pushes under when no
// X-Scope-OrgID is sent (Loki with auth_enabled: false).
const storyLokiTenant = "fake"

// storyLogEntry is the LogEntry fields the story reads back.
type storyLogEntry struct {
	ID      string `json:"id"`
	Target  string `json:"target"`
	Message string `json:"message"`
}

// startLogs spawns the log storage plugin the daemon tees its logs into,
// pointed at the fake Loki by LOKI_URL.
func (s *story) startLogs() error {
	const bin = "animus-logs-loki"
	if err := s.need(bin); err != nil {
		return err
	}
	h, err := s.spawnLogs()
	if err != nil {
		return err
	}
	s.logs = h
	s.OK("animus-logs-loki is the daemon's log storage, LOKI_URL=%s", s.loki.URL())
	return nil
}

// spawnLogs starts a log storage process as the daemon does: cwd the
// project, LOKI_URL in its environment, the generic handshake.
func (s *story) spawnLogs() (*fakehost.Host, error) {
	h, err := s.Spawn(s.ctx, "animus-logs-loki", func(c *fakehost.Config) {
		c.Dir, c.Env = s.project, map[string]string{"LOKI_URL": s.loki.URL()}
	})
	if err != nil {
		return nil, err
	}
	if _, err := h.Initialize(s.ctx, fakehost.Handshake{Preset: fakehost.PresetDaemon}); err != nil {
		return nil, err
	}
	_, s.seen[h] = h.WireLines(0)
	return h, nil
}

// log stores one workflow log line, one entry per call as the daemon
// writes. Without a log storage plugin the line is dropped and step 4
// reports why; the workflow itself goes on, as the daemon's would.
func (s *story) log(level, step, message string, fields map[string]any) {
	if s.logs == nil || s.logErr != nil {
		return
	}
	s.logSeq++
	entry := map[string]any{
		"id": fmt.Sprintf("%s-log-%02d", storyWorkflow, s.logSeq), "ts": time.Now().UTC().Format(time.RFC3339Nano),
		"level": level, "source": "workflow", "source_name": storyWorkflow,
		"target": "workflow." + storyPhase + "." + step, "message": message,
	}
	if fields != nil {
		entry["fields"] = fields
	}
	var res struct {
		Stored int `json:"stored"`
	}
	// One line per store instead of its two frames, so the workflow's own
	// calls stay readable around it; anything else (tail events) is shown.
	s.Frames(s.logs)
	id := fmt.Sprintf(`"store-%02d"`, s.logSeq)
	resp, err := s.logs.Request(s.ctx, json.RawMessage(id), "log_storage/store", map[string]any{"entries": []any{entry}})
	if err == nil && resp.Error != nil {
		err = resp.Error
	}
	if err == nil {
		err = json.Unmarshal(resp.Result, &res)
	}
	if err != nil {
		s.logErr = fmt.Errorf("log_storage/store: %w", err)
		s.Bad("%v", s.logErr)
		return
	}
	fmt.Fprintf(s.w, "    %s %s %s %q → %s\n", s.paint(dim, "host → logs-loki"), "log_storage/store", level+" "+entry["target"].(string), message, resp.Result)
	s.FramesExcept(s.logs, `"id":`+id)
	if res.Stored != 1 {
		s.logErr = fmt.Errorf("log_storage/store answered stored=%d for 1 entry", res.Stored)
		return
	}
	s.res.LogsStored = append(s.res.LogsStored, entry["id"].(string))
}

// stepLogs reads the workflow's log lines back from Loki through the
// plugin: a query, then a tail that replays them and follows a new one.
func (s *story) stepLogs() error {
	const bin = "animus-logs-loki"
	s.Step("4. Every step's log lines went to animus-logs-loki as they happened (log_storage/store above); read them back from Loki")
	if err := s.need(bin); err != nil {
		return s.fail(bin, err)
	}
	if s.logs == nil {
		return s.fail(bin, fmt.Errorf("the log storage plugin did not start"))
	}
	if s.logErr != nil {
		return s.fail(bin, s.logErr)
	}
	s.res.LokiEntries = s.loki.Entries(storyLokiTenant)
	s.Say("A fresh log storage process (as after a daemon restart: nothing buffered) queries Loki for the workflow's lines")
	fresh, err := s.spawnLogs()
	if err != nil {
		return s.fail(bin, err)
	}
	filter := map[string]any{"source_name": storyWorkflow, "target_glob": "workflow." + storyPhase + ".*", "limit": 100}
	var q struct {
		Entries []storyLogEntry `json:"entries"`
	}
	if _, err := s.call(fresh, "log_storage/query", filter, &q); err != nil {
		return s.fail(bin, err)
	}
	if rep, err := fresh.Shutdown(s.ctx, fakehost.LadderDaemon); err != nil || !rep.ExitedByItself {
		return s.fail(bin, fmt.Errorf("the query process did not exit by itself: %v", err))
	}
	for _, e := range q.Entries {
		s.res.LogsQueried = append(s.res.LogsQueried, e.ID)
	}
	if err := s.Expect(len(s.res.LogsStored) > 0 && slices.Equal(s.res.LogsQueried, s.res.LogsStored) && s.res.LokiEntries >= len(s.res.LogsStored),
		"query: the %d lines, oldest first; fake Loki holds %d pushed entries", len(q.Entries), s.res.LokiEntries); err != nil {
		return s.fail(bin, err)
	}

	s.Say("log_storage/tail with follow: the backlog first, then a line stored while the tail is open")
	tailID := json.RawMessage(`"tail-story"`)
	filter["follow"] = true
	resp, err := s.logs.Request(s.ctx, tailID, "log_storage/tail", filter)
	if err != nil {
		return s.fail(bin, err)
	}
	if resp.Error != nil || string(resp.Result) != `{"tailing":true}` {
		s.Frames(s.logs)
		return s.fail(bin, fmt.Errorf("log_storage/tail: %s", resp.Raw))
	}
	if _, err := s.tailed(len(s.res.LogsStored)); err != nil {
		s.Frames(s.logs)
		return s.fail(bin, err)
	}
	s.log("info", "runner", "phase "+storyPhase+" finished", map[string]any{"steps": 2})
	tailed, err := s.tailed(len(s.res.LogsStored))
	if err := s.logs.Notify("$/cancelRequest", map[string]any{"id": tailID}); err != nil {
		return s.fail(bin, err)
	}
	s.Frames(s.logs)
	for _, e := range tailed {
		s.res.LogsTailed = append(s.res.LogsTailed, e.ID)
	}
	if err != nil {
		return s.fail(bin, err)
	}
	if err := s.Expect(slices.Equal(s.res.LogsTailed, s.res.LogsStored), "tail: %d log_storage/event notifications for id %s, the last one live: %q",
		len(tailed), tailID, tailed[len(tailed)-1].Message); err != nil {
		return s.fail(bin, err)
	}
	s.record(bin, "%d lines stored to Loki, read back by query and tail (follow)", len(s.res.LogsStored))
	return nil
}

// tailed waits until the tail has delivered n entries and returns them in
// arrival order.
func (s *story) tailed(n int) ([]storyLogEntry, error) {
	collect := func() []storyLogEntry {
		var out []storyLogEntry
		for _, nt := range s.logs.Notifications() {
			var p struct {
				ID    json.RawMessage `json:"id"`
				Entry *storyLogEntry  `json:"entry"`
			}
			if nt.Method == "log_storage/event" && json.Unmarshal(nt.Params, &p) == nil && string(p.ID) == `"tail-story"` && p.Entry != nil {
				out = append(out, *p.Entry)
			}
		}
		return out
	}
	ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
	defer cancel()
	err := waitDemo(ctx, func() bool { return len(collect()) >= n })
	if err != nil {
		err = fmt.Errorf("tail delivered %d of %d entries: %w", len(collect()), n, err)
	}
	return collect(), err
}
