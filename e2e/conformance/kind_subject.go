package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// subjectScenarios ports the testkit's subject suite (subject.md §6) and adds
// the checks its table leaves out but the reference makes unambiguous.
func subjectScenarios() []Scenario {
	return []Scenario{
		{"subject", "handshake", scenarioKindHandshake("subject_backend")},
		{"subject", "advertise-kinds", scenarioAdvertiseKinds},
		{"subject", "subject-list", scenarioSubjectList},
		{"subject", "subject-crud-round-trip", scenarioSubjectCRUD},
		{"subject", "subject-watch-stream", scenarioSubjectWatch},
		// Beyond the testkit.
		{"subject", "schema-shape", scenarioSubjectSchemaShape},
		{"subject", "list-result-shape", scenarioSubjectListShape},
		{"subject", "watch-changed-shape", scenarioSubjectChangedShape},
		{"subject", "watch-ack-then-eof-exit", scenarioSubjectWatchEOF},
	}
}

// scenarioAdvertiseKinds (subject.md §6 row 2): initialize
// capabilities.subject_kinds is non-empty.
func scenarioAdvertiseKinds(ctx context.Context, s *Session) Outcome {
	_, res, err := testkitSpawn(ctx, s)
	if err != nil {
		return failf("%v", err)
	}
	if len(res.Capabilities.SubjectKinds) == 0 {
		return failf("capabilities.subject_kinds is empty")
	}
	return pass()
}

// subjectDriven is the testkit's driven_request: a fresh process, the
// handshake, one call with the 5 s budget. A spawn or handshake failure is
// reported apart (spawnErr) because the testkit never classifies it: its
// anyhow context prints only "handshake".
func subjectDriven(ctx context.Context, s *Session, method string) (result json.RawMessage, spawnErr, callErr error) {
	h, _, err := testkitSpawn(ctx, s)
	if err != nil {
		return nil, err, nil
	}
	result, callErr = testkitCall(ctx, h, subjectCallBudget, method, json.RawMessage(`{}`))
	return result, nil, callErr
}

// scenarioSubjectList (subject.md §6 row 3): K/list or subject/list with {}
// returns an object, array or null. Its error alone goes through the keyword
// classifier: configuration missing is a SKIP.
func scenarioSubjectList(ctx context.Context, s *Session) Outcome {
	method := methodPicker(s.Init)("list")
	if method == "" {
		return skipf("plugin advertises no `*/list` method")
	}
	result, spawnErr, err := subjectDriven(ctx, s, method)
	switch {
	case spawnErr != nil:
		return failf("%s: %v", method, spawnErr)
	case err != nil && configMissing(err.Error()):
		return skipf("%s requires external configuration: %v", method, err)
	case err != nil:
		return failf("%s: %v", method, err)
	}
	switch firstByte(result) {
	case '{', '[', 'n':
		return pass()
	}
	return failf("`%s` returned non-object/array: %s", method, short(result))
}

// scenarioSubjectCRUD (subject.md §6 row 4): in one process, create
// {title, description} (no kind) must succeed and return an id at the top
// level or as subject.id; get {id} must succeed when advertised; update
// {id, patch:{comment}} and delete {id} are attempted and may fail. The
// testkit applies no skip classifier here.
func scenarioSubjectCRUD(ctx context.Context, s *Session) Outcome {
	pick := methodPicker(s.Init)
	create := pick("create")
	if create == "" {
		return skipf("plugin does not advertise `*/create`")
	}
	h, _, err := testkitSpawn(ctx, s)
	if err != nil {
		return failf("%v", err)
	}
	params := map[string]string{
		"title":       fmt.Sprintf("subject-conformance-%d", time.Now().UnixMilli()),
		"description": "harness round-trip",
	}
	created, err := testkitCall(ctx, h, subjectCallBudget, create, params)
	if err != nil {
		return failf("%s: %v", create, err)
	}
	id := extractSubjectID(created)
	if id == "" {
		return failf("%s returned no id; got %s", create, short(created))
	}
	if get := pick("get"); get != "" {
		if _, err := testkitCall(ctx, h, subjectCallBudget, get, map[string]string{"id": id}); err != nil {
			return failf("%s: %v", get, err)
		}
	}
	if update := pick("update"); update != "" {
		_, _ = testkitCall(ctx, h, subjectCallBudget, update, map[string]any{"id": id, "patch": map[string]string{"comment": "round-trip"}})
	}
	if del := pick("delete"); del != "" {
		_, _ = testkitCall(ctx, h, subjectCallBudget, del, map[string]string{"id": id})
	}
	return pass()
}

// extractSubjectID is the testkit's extract_id: a string "id" at the top
// level, else a string "subject.id".
func extractSubjectID(raw json.RawMessage) string {
	var v struct {
		ID      any `json:"id"`
		Subject struct {
			ID any `json:"id"`
		} `json:"subject"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	if id, ok := v.ID.(string); ok {
		return id
	}
	id, _ := v.Subject.ID.(string)
	return id
}

// scenarioSubjectWatch (subject.md §6 row 5): K/watch or subject/watch with
// {} answers within 5 s; an error naming -32001/-32601 or saying "not
// supported", "not implemented" or "not found" also passes.
func scenarioSubjectWatch(ctx context.Context, s *Session) Outcome {
	method := methodPicker(s.Init)("watch")
	if method == "" {
		return skipf("plugin does not advertise `*/watch`")
	}
	_, spawnErr, err := subjectDriven(ctx, s, method)
	switch {
	case spawnErr != nil:
		return failf("%s: %v", method, spawnErr)
	case err != nil && !watchUnsupported(err.Error()):
		return failf("%s: %v", method, err)
	}
	return pass()
}

func watchUnsupported(msg string) bool {
	lower := strings.ToLower(msg)
	return strings.Contains(msg, "-32001") || strings.Contains(msg, "-32601") ||
		strings.Contains(lower, "not supported") || strings.Contains(lower, "not implemented") ||
		strings.Contains(lower, "not found")
}

// scenarioSubjectSchemaShape (subject.md §1 SubjectSchema, §7.1 schema):
// K/schema or subject/schema answers a schema-valid SubjectSchema.
func scenarioSubjectSchemaShape(ctx context.Context, s *Session) Outcome {
	return subjectShape(ctx, s, "schema", "SubjectSchema", false)
}

// scenarioSubjectListShape (subject.md §1 SubjectList, §2.3): the list
// result is the {subjects, next_cursor?, fetched_at} object the daemon
// decodes, not just "an object", with every subject schema-valid. Missing
// configuration skips it as it does subject-list.
func scenarioSubjectListShape(ctx context.Context, s *Session) Outcome {
	return subjectShape(ctx, s, "list", "SubjectList", true)
}

func subjectShape(ctx context.Context, s *Session, verb, typ string, classify bool) Outcome {
	method := methodPicker(s.Init)(verb)
	if method == "" {
		return skipf("plugin advertises no `*/%s` method", verb)
	}
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	resp, err := call(ctx, h, subjectCallBudget, method, json.RawMessage(`{}`))
	if err != nil {
		return failf("%v", err)
	}
	if err := wantResult(resp, nil); err != nil {
		if classify && configMissing(err.Error()) {
			return skipf("%s requires external configuration: %v", method, err)
		}
		return failf("%v", err)
	}
	if err := s.Schemas.Validate(schemacheck.SubjectProtocol, typ, resp.Result); err != nil {
		return failf("%s result is not a valid %s: %v", method, typ, err)
	}
	return pass()
}

// scenarioSubjectChangedShape (subject.md §1 "Notification frame", §3.5,
// §7 A12): after a watch, a create in the same process is announced as
// subject/changed with params {id: <watch request id, same JSON>, event:
// SubjectChangedEvent} about the created subject. A backend that only
// reports upstream changes may stay silent: that is a SKIP, a wrong shape a
// FAIL.
func scenarioSubjectChangedShape(ctx context.Context, s *Session) Outcome {
	pick := methodPicker(s.Init)
	watch, create := pick("watch"), pick("create")
	if watch == "" || create == "" {
		return skipf("needs both `*/watch` and `*/create`")
	}
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	const watchID = "4242"
	wctx, cancel := context.WithTimeout(ctx, subjectCallBudget)
	resp, err := h.Request(wctx, json.RawMessage(watchID), watch, json.RawMessage(`{}`))
	cancel()
	if err != nil {
		return failf("%s: %v", watch, err)
	}
	if err := wantResult(resp, nil); err != nil {
		if watchUnsupported(err.Error()) || configMissing(err.Error()) {
			return skipf("no live watch to test: %v", err)
		}
		return failf("%v", err)
	}
	resp, err = call(ctx, h, subjectCallBudget, create, map[string]string{"title": "watch-conformance", "description": "created under a watch"})
	if err != nil {
		return failf("%v", err)
	}
	var created struct {
		ID string `json:"id"`
	}
	if err := wantResult(resp, &created); err != nil {
		if configMissing(err.Error()) {
			return skipf("%v", err)
		}
		return failf("%v", err)
	}
	nctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	n, err := h.WaitNotification(nctx, func(n fakehost.Notification) bool { return n.Method == "subject/changed" })
	if err != nil {
		return skipf("no subject/changed within 3 s of %s (the backend may only report upstream changes)", create)
	}
	var p struct {
		ID    json.RawMessage `json:"id"`
		Event json.RawMessage `json:"event"`
	}
	if err := json.Unmarshal(n.Params, &p); err != nil {
		return failf("subject/changed params are not an object: %s", short(n.Params))
	}
	if !bytes.Equal(compactJSON(p.ID), []byte(watchID)) {
		return failf("subject/changed params.id is %s, want the watch request id %s", short(p.ID), watchID)
	}
	if p.Event == nil {
		return failf("subject/changed params lack event (the §2.2 {id, subject} shape is dropped by the daemon): %s", short(n.Params))
	}
	if err := s.Schemas.Validate(schemacheck.SubjectProtocol, "SubjectChangedEvent", p.Event); err != nil {
		return failf("subject/changed params.event is not a valid SubjectChangedEvent: %v", err)
	}
	var ev struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(p.Event, &ev)
	if created.ID != "" && ev.ID != created.ID {
		return failf("first subject/changed is about %q, not the created %q", ev.ID, created.ID)
	}
	return pass()
}

// scenarioSubjectWatchEOF (host-and-lifecycle §8.2–§8.3, subject.md §6 row 5
// and §7.8): the testkit closes stdin right after the watch ack, so with a
// live watch the plugin must exit 0 on EOF within idleExitBudget.
func scenarioSubjectWatchEOF(ctx context.Context, s *Session) Outcome {
	method := methodPicker(s.Init)("watch")
	if method == "" {
		return skipf("plugin does not advertise `*/watch`")
	}
	h, _, err := testkitSpawn(ctx, s)
	if err != nil {
		return failf("%v", err)
	}
	if _, err := testkitCall(ctx, h, subjectCallBudget, method, json.RawMessage(`{}`)); err != nil {
		if watchUnsupported(err.Error()) || configMissing(err.Error()) {
			return skipf("no live watch to test: %v", err)
		}
		return failf("%v", err)
	}
	start := time.Now()
	if err := h.CloseStdin(); err != nil {
		return failf("closing stdin: %v", err)
	}
	exited, code := h.Wait(2 * time.Second)
	switch elapsed := time.Since(start); {
	case !exited:
		return failf("still running 2 s after stdin EOF with a live watch (the testkit kills at %v)", fakehost.TestkitExitWait)
	case code != 0:
		return failf("exit code %d after stdin EOF, want 0", code)
	case elapsed > idleExitBudget:
		return failf("took %v to exit on stdin EOF with a live watch, want < %v", elapsed.Round(time.Millisecond), idleExitBudget)
	}
	return pass()
}

func firstByte(raw []byte) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

func compactJSON(raw []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
