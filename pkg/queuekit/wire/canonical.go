package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// ErrNoIdentity is the refusal of a subject that has no canonical id.
var ErrNoIdentity = errors.New("queue subject identity is missing")

// CanonicalID is the subject's <kind>:<native-id> (queue-v2.md §3.2): the
// built-in kinds animus.task and animus.requirement map to task and
// requirement (other kinds verbatim, case kept), kind and id are trimmed,
// and an id already qualified with its kind (any ASCII case) loses that
// prefix once, which absorbs the 0.7 CLI's task:TASK-1 ids.
func (s SubjectRef) CanonicalID() (string, error) {
	kind := strings.TrimSpace(s.Kind)
	switch kind {
	case KindTask:
		kind = "task"
	case KindRequirement:
		kind = "requirement"
	}
	id := strings.TrimSpace(s.ID)
	if len(id) > len(kind) && strings.EqualFold(id[:len(kind)+1], kind+":") {
		id = id[len(kind)+1:]
	}
	if kind == "" || id == "" {
		return "", ErrNoIdentity
	}
	return kind + ":" + id, nil
}

// RequestHash is the content hash an idempotency key is bound to: SHA-256
// (lowercase hex) of canonical JSON of the dispatch as stored minus
// requested_at (the CLI restamps it on every retry), the trimmed
// repository, the raw run_at and expire_after_secs. The hash never leaves
// the plugin; it must only stay stable across versions of this plugin.
// dispatch is r.Dispatch as stored (its Encode), which the caller already
// has.
func RequestHash(r *EnqueueV2Request, dispatch json.RawMessage) (string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(dispatch, &fields); err != nil {
		return "", err
	}
	delete(fields, "requested_at")
	body, err := rustjson.Marshal(struct {
		Dispatch        map[string]json.RawMessage `json:"dispatch"`
		ExpireAfterSecs *uint64                    `json:"expire_after_secs"`
		Repository      *RepositoryReservation     `json:"repository"`
		RunAt           *string                    `json:"run_at"`
	}{fields, r.ExpireAfterSecs, r.Repository, r.RunAt})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:]), nil
}
