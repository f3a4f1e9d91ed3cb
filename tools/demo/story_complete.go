package demo

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/webhooksig"
)

// stepComplete: the workflow finished. The subject is done, the queue
// entry completed, and the notifier tells a webhook, signed.
func (s *story) stepComplete() error {
	const subj, queue, notifier = "animus-subject-sqlite", "animus-queue-sqlite", "animus-notifier-webhook"
	s.Step("5. The workflow completes: subject → done, queue entry completed, a signed workflow_completed webhook")
	if err := s.need(subj, queue, notifier); err != nil {
		return err
	}
	var sub storySubject
	resp, err := s.call(s.subjects, "task/status", map[string]string{"id": s.res.SubjectID, "status": "done"}, &sub)
	if err != nil {
		return s.fail(subj, err)
	}
	if err := s.mirror.putSubject(resp.Result); err != nil {
		return err
	}
	s.res.SubjectStatus = sub.Status
	if err := s.queueComplete(s.queue); err != nil {
		return s.fail(queue, err)
	}
	s.mirror.entryStatus(s.res.EntryID, "done")
	finished := stamp()
	for i := range s.mirror.workflows {
		if s.mirror.workflows[i].ID == storyWorkflow {
			s.mirror.workflows[i].Status, s.mirror.workflows[i].FinishedAt = "completed", finished
		}
	}
	s.sync()
	s.emit("subject-status-changed", map[string]any{"subject_id": s.res.SubjectID, "status": sub.Status})
	s.emit("workflow_completed", map[string]any{"workflow_id": storyWorkflow, "subject_id": s.res.SubjectID})
	s.record(subj, "then done")
	s.record(queue, "completed the entry; stats %d pending, %d assigned", s.res.PendingAfter, s.res.AssignedAfter)

	s.Say("The daemon hands the event to animus-notifier-webhook (quick start: ANIMUS_WEBHOOK_URL + ANIMUS_WEBHOOK_SECRET)")
	h, err := s.Spawn(s.ctx, notifier, func(c *fakehost.Config) {
		c.Dir, c.EnvMode = s.project, fakehost.EnvDaemonNarrow
		c.Env = map[string]string{"HOME": s.project, "ANIMUS_WEBHOOK_URL": s.receiver.srv.URL + "/animus", "ANIMUS_WEBHOOK_SECRET": s.receiver.secret}
	})
	if err != nil {
		return s.fail(notifier, err)
	}
	if _, err := h.Initialize(s.ctx, fakehost.Handshake{Preset: fakehost.PresetNotifier}); err != nil {
		return s.fail(notifier, err)
	}
	_, s.seen[h] = h.WireLines(0)
	event := map[string]any{"event": map[string]any{
		"schema": "animus.daemon.event.v1", "id": "evt-" + storyWorkflow + "-done", "seq": len(s.res.Emitted),
		"timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000000+00:00"), "event_type": "workflow_completed",
		"project_root": s.project, "data": map[string]any{"workflow_id": storyWorkflow, "subject_id": s.res.SubjectID, "trigger_event_id": s.res.EventID},
	}}
	var res struct {
		Delivered int `json:"delivered"`
	}
	if _, err := s.call(h, "notifier/notify", event, &res); err != nil {
		return s.fail(notifier, err)
	}
	d, n := s.receiver.last()
	s.res.Deliveries = n
	s.res.SignatureOK = d.verified
	s.res.WrongKeyRejected = d.body != nil && webhooksig.VerifyStandard(storyRandomSecret(), d.header, d.body, time.Now(), 0) != nil
	var body struct {
		Event struct {
			EventType string `json:"event_type"`
			Data      struct {
				WorkflowID string `json:"workflow_id"`
			} `json:"data"`
		} `json:"event"`
	}
	_ = json.Unmarshal(d.body, &body)
	s.res.WebhookEventType, s.res.WebhookWorkflow = body.Event.EventType, body.Event.Data.WorkflowID
	if err := s.Expect(res.Delivered == 1 && n == 1 && s.res.SignatureOK && s.res.WrongKeyRejected && s.res.WebhookEventType == "workflow_completed" && s.res.WebhookWorkflow == storyWorkflow,
		"delivered %d; the receiver verified webhook-signature %s (and a different key fails it); body: %s for %s",
		res.Delivered, shortJSON([]byte(d.header.Get("webhook-signature")), 20), s.res.WebhookEventType, s.res.WebhookWorkflow); err != nil {
		return s.fail(notifier, err)
	}
	rep, err := h.Shutdown(s.ctx, fakehost.LadderDaemon)
	if err != nil {
		return s.fail(notifier, err)
	}
	if !rep.ExitedByItself || rep.ExitCode != 0 {
		return s.fail(notifier, fmt.Errorf("did not exit by itself (code %d)", rep.ExitCode))
	}
	s.emit("notification-delivered", map[string]any{"event_type": "workflow_completed", "connector_id": "webhook", "idempotency_key": d.header.Get("Idempotency-Key")})
	s.record(notifier, "signed workflow_completed webhook, verified by the receiver")
	return nil
}

// storyRandomSecret is a fresh whsec_ key, so no run can pass on a key
// baked into the code.
func storyRandomSecret() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}
