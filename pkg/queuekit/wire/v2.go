package wire

import (
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// The queue/v2/* request types of animus-queue-protocol 0.4.0
// (queue-v2.md §2.7–§2.9). Every envelope is strict; subject_dispatch
// stays lenient. A decode failure is an error naming the field (pluginkit
// words it "invalid <method> params: …"); a validation failure is a
// pluginkit.InvalidParams carrying the crate's message verbatim.

// MaxLeaseBatch is the largest v2 lease batch, advertised and enforced.
const MaxLeaseBatch = 5

// MaxIdempotencyKey is the longest idempotency key, in characters.
const MaxIdempotencyKey = 256

// maxChronoUnix is the last second chrono can represent (+262143-12-31
// 23:59:59 UTC): run_at + expire_after_secs must stay within it.
const maxChronoUnix = 8210298412799

func invalid(format string, args ...any) error { return pluginkit.InvalidParams(format, args...) }

// EnqueueV2Request is QueueEnqueueV2Request, validated and normalised:
// the key and the repository fields trimmed, the canonical id derived,
// run_at checked (kept verbatim; newEntry parses it for the store).
type EnqueueV2Request struct {
	Dispatch        Dispatch
	IdempotencyKey  *string
	Repository      *RepositoryReservation
	RunAt           *string // verbatim
	ExpireAfterSecs *uint64

	QualifiedID string
}

// DecodeParams reads and validates queue/v2/enqueue params.
func (r *EnqueueV2Request) DecodeParams(raw []byte) error {
	o, err := requiredStrict(raw, "QueueEnqueueV2Request", "subject_dispatch", "idempotency_key",
		"repository", "run_at", "expire_after_secs")
	if err != nil {
		return err
	}
	d, err := o.reqObject("subject_dispatch", "SubjectDispatch")
	if err != nil {
		return err
	}
	if r.Dispatch, err = DecodeDispatch(d); err != nil {
		return prefix("subject_dispatch", err)
	}
	if r.IdempotencyKey, err = o.optString("idempotency_key"); err != nil {
		return err
	}
	if r.Repository, err = optNested(o, "repository", decodeRepository); err != nil {
		return err
	}
	if r.RunAt, err = o.optString("run_at"); err != nil {
		return err
	}
	if r.ExpireAfterSecs, err = o.optUint("expire_after_secs"); err != nil {
		return err
	}
	return r.validate()
}

func (r *EnqueueV2Request) validate() error {
	if r.Dispatch.Subject == nil {
		return invalid("generation-fenced enqueue requires a subject")
	}
	if strings.TrimSpace(r.Dispatch.WorkflowRef) == "" {
		return invalid("generation-fenced enqueue requires workflow_ref")
	}
	if k := r.IdempotencyKey; k != nil {
		trimmed := strings.TrimSpace(*k)
		if trimmed == "" {
			return invalid("idempotency_key must not be empty when present")
		}
		if utf8.RuneCountInString(trimmed) > MaxIdempotencyKey {
			return invalid("idempotency_key must be a non-empty string of at most %d characters", MaxIdempotencyKey)
		}
		r.IdempotencyKey = &trimmed
	}
	if repo := r.Repository; repo != nil {
		repo.Repository = strings.TrimSpace(repo.Repository)
		repo.BaseRef = strings.TrimSpace(repo.BaseRef)
		repo.HeadRef = strings.TrimSpace(repo.HeadRef)
		if err := repo.Validate(); err != nil {
			return invalid("%s", err.Error())
		}
	}
	qid, err := r.Dispatch.Subject.CanonicalID()
	if err != nil {
		return invalid("%s", err.Error())
	}
	r.QualifiedID = qid
	var runAt *time.Time
	if r.RunAt != nil {
		at, err := rustjson.ParseTime(*r.RunAt)
		if err != nil {
			return invalid("run_at must be RFC 3339 (%s): %v", *r.RunAt, err)
		}
		runAt = &at
	}
	if n := r.ExpireAfterSecs; n != nil {
		tooLarge := *n > math.MaxInt64/1000 // chrono's Duration bound
		if !tooLarge && runAt != nil {
			tooLarge = runAt.Unix() > maxChronoUnix-int64(*n)
		}
		if tooLarge {
			return invalid("expire_after_secs %d is too large: run_at + expire_after_secs must be a valid time", *n)
		}
	}
	return nil
}

// LeaseV2Request is QueueLeaseV2Request; OwnerID is trimmed.
type LeaseV2Request struct {
	Max         uint64
	OwnerID     string
	WorkflowIDs []string
	Exclude     []*ExecutionFence
}

// DecodeParams reads and validates queue/v2/lease params.
func (r *LeaseV2Request) DecodeParams(raw []byte) error {
	o, err := requiredStrict(raw, "QueueLeaseV2Request", "max", "owner_id", "workflow_ids", "exclude")
	if err != nil {
		return err
	}
	if r.Max, err = o.reqUint("max"); err != nil {
		return err
	}
	if r.OwnerID, err = o.reqString("owner_id"); err != nil {
		return err
	}
	if r.WorkflowIDs, err = o.reqStrings("workflow_ids"); err != nil {
		return err
	}
	items, err := o.optArray("exclude", "ExecutionFence")
	if err != nil {
		return err
	}
	for _, item := range items {
		f, err := DecodeFence(item)
		if err != nil {
			return err
		}
		r.Exclude = append(r.Exclude, f)
	}
	return r.validate()
}

func (r *LeaseV2Request) validate() error {
	if r.Max == 0 {
		return invalid("queue lease max must be greater than zero")
	}
	r.OwnerID = strings.TrimSpace(r.OwnerID)
	if r.OwnerID == "" {
		return invalid("queue lease owner_id must not be empty")
	}
	if uint64(len(r.WorkflowIDs)) != r.Max {
		return invalid("workflow_ids length %d did not match max %d", len(r.WorkflowIDs), r.Max)
	}
	seen := make(map[string]bool, len(r.WorkflowIDs))
	for _, id := range r.WorkflowIDs {
		if strings.TrimSpace(id) == "" || seen[id] {
			return invalid("workflow_ids must be non-empty and unique")
		}
		seen[id] = true
	}
	for _, f := range r.Exclude {
		if err := f.Validate(); err != nil {
			return invalid("%s", err.Error())
		}
	}
	if r.Max > MaxLeaseBatch {
		return invalid("queue v2 lease requires max 1..%d, owner_id, and max unique workflow_ids", MaxLeaseBatch)
	}
	return nil
}

// fencedParams starts every ticket mutation: a strict envelope whose
// required execution is a queue-backed fence.
func fencedParams(raw []byte, what string, fields ...string) (object, *ExecutionFence, error) {
	o, err := requiredStrict(raw, what, fields...)
	if err != nil {
		return nil, nil, err
	}
	v, err := o.reqObject("execution", "ExecutionFence")
	if err != nil {
		return nil, nil, err
	}
	f, err := DecodeFence(v)
	if err != nil {
		return nil, nil, err
	}
	return o, f, nil
}

// checkFenced validates the fence once every field has decoded, so a
// decode error always wins over a validation error, as in serde.
func checkFenced(f *ExecutionFence) error {
	if err := f.ValidateQueueBacked(); err != nil {
		return invalid("%s", err.Error())
	}
	return nil
}

// RenewRequest is QueueLeaseRenewRequest.
type RenewRequest struct {
	Execution *ExecutionFence
	TTLSecs   *uint64
}

// DecodeParams reads and validates queue/v2/lease/renew params.
func (r *RenewRequest) DecodeParams(raw []byte) error {
	o, f, err := fencedParams(raw, "QueueLeaseRenewRequest", "execution", "ttl_secs")
	if err != nil {
		return err
	}
	r.Execution = f
	if r.TTLSecs, err = o.optUint("ttl_secs"); err != nil {
		return err
	}
	if err := checkFenced(f); err != nil {
		return err
	}
	if r.TTLSecs != nil && *r.TTLSecs == 0 {
		return invalid("lease renewal ttl_secs must be greater than zero")
	}
	return nil
}

// RecoverRequest is QueueLeaseRecoverRequest; NewOwnerID is trimmed.
type RecoverRequest struct {
	Execution  *ExecutionFence
	NewOwnerID string
	TTLSecs    *uint64
}

// DecodeParams reads and validates queue/v2/lease/recover params.
func (r *RecoverRequest) DecodeParams(raw []byte) error {
	o, f, err := fencedParams(raw, "QueueLeaseRecoverRequest", "execution", "new_owner_id", "ttl_secs")
	if err != nil {
		return err
	}
	r.Execution = f
	if r.NewOwnerID, err = o.reqString("new_owner_id"); err != nil {
		return err
	}
	if r.TTLSecs, err = o.optUint("ttl_secs"); err != nil {
		return err
	}
	if err := checkFenced(f); err != nil {
		return err
	}
	r.NewOwnerID = strings.TrimSpace(r.NewOwnerID)
	if r.NewOwnerID == "" || r.NewOwnerID == strings.TrimSpace(f.QueueLease.OwnerID) {
		return invalid("lease recovery requires a different non-empty owner")
	}
	if r.TTLSecs != nil && *r.TTLSecs == 0 {
		return invalid("lease recovery ttl_secs must be greater than zero")
	}
	return nil
}

// CompletionV2Request is QueueCompletionV2Request. WorkflowRef is accepted
// and ignored, as in the reference.
type CompletionV2Request struct {
	Execution   *ExecutionFence
	Status      string
	WorkflowRef *string
}

// DecodeParams reads and validates queue/v2/completion params.
func (r *CompletionV2Request) DecodeParams(raw []byte) error {
	o, f, err := fencedParams(raw, "QueueCompletionV2Request", "execution", "status", "workflow_ref")
	if err != nil {
		return err
	}
	r.Execution = f
	if r.Status, err = o.reqString("status"); err != nil {
		return err
	}
	if r.WorkflowRef, err = o.optString("workflow_ref"); err != nil {
		return err
	}
	if err := checkFenced(f); err != nil {
		return err
	}
	switch r.Status {
	case CompletionCompleted, CompletionFailed, CompletionCancelled:
		return nil
	}
	return invalid("queue completion status is not terminal")
}

// ReleasePendingV2Request is QueueReleasePendingV2Request; Reason is
// trimmed.
type ReleasePendingV2Request struct {
	Execution *ExecutionFence
	Reason    string
}

// DecodeParams reads and validates queue/v2/release_pending params.
func (r *ReleasePendingV2Request) DecodeParams(raw []byte) error {
	o, f, err := fencedParams(raw, "QueueReleasePendingV2Request", "execution", "reason")
	if err != nil {
		return err
	}
	r.Execution = f
	if r.Reason, err = o.reqString("reason"); err != nil {
		return err
	}
	if err := checkFenced(f); err != nil {
		return err
	}
	r.Reason = strings.TrimSpace(r.Reason)
	if r.Reason == "" {
		return invalid("queue release-pending reason must not be empty")
	}
	return nil
}

// Response types (strict on the host side: never add keys).

// EnqueueV2Response is QueueEnqueueV2Response.
type EnqueueV2Response struct {
	Enqueued bool              `json:"enqueued"`
	EntryID  string            `json:"entry_id"`
	Subject  SubjectGeneration `json:"subject"`
	Warning  string            `json:"warning,omitempty"`
}

// FencedEntry is FencedQueueEntry.
type FencedEntry struct {
	Entry     Entry          `json:"entry"`
	Execution ExecutionFence `json:"execution"`
}

// LeaseBlock is QueueLeaseBlock.
type LeaseBlock struct {
	ConflictsWith *ExecutionFence `json:"conflicts_with,omitempty"`
	EntryID       string          `json:"entry_id"`
	Reason        string          `json:"reason"`
}

// LeaseV2Response is QueueLeaseV2Response.
type LeaseV2Response struct {
	Blocked []LeaseBlock  `json:"blocked,omitempty"`
	Leased  []FencedEntry `json:"leased"`
}

// MutationV2Response is QueueLeaseMutationResponse.
type MutationV2Response struct {
	Execution *ExecutionFence `json:"execution,omitempty"`
	Outcome   string          `json:"outcome"`
	Reason    string          `json:"reason,omitempty"`
}

// Block reasons and mutation outcomes (snake_case on the wire).
const (
	BlockSubjectGenerationActive  = "subject_generation_active"
	BlockRepositoryRefCollision   = "repository_ref_collision"
	BlockMissingExecutionIdentity = "missing_execution_identity"

	OutcomeApplied        = "applied"
	OutcomeAlreadyApplied = "already_applied"
	OutcomeNotFound       = "not_found"
	OutcomeStaleFence     = "stale_fence"
	OutcomeLeaseStillLive = "lease_still_live"
	OutcomeNotAssigned    = "not_assigned"
)

// Capabilities is QueueCapabilities, the kind_capabilities.queue.extra
// object, as 0.4.0 advertises it.
type Capabilities struct {
	GenerationFencedLeasesV1 bool   `json:"generation_fenced_leases_v1"`
	MaxLeaseBatch            uint32 `json:"max_lease_batch"`
	PriorityWeighted         bool   `json:"priority_weighted"`
}

// CrateVersion is the animus-queue-protocol version advertised: 0.4.0, of
// which 0.3.2 is the old-style subset.
const CrateVersion = "0.4.0"
