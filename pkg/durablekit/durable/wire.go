package durable

import (
	"encoding/json"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// Wire types of animus-durable-store-protocol 0.1.0 (durable.md §3).
// Result structs declare their fields in alphabetical order so the JSON keys
// come out sorted, as the Rust plugins emit them. Optional JSON values are
// json.RawMessage: absent and null are the same on input and omitted on
// output.

// maxIDBytes bounds every id and name; real ones are well under 200 bytes,
// and an unbounded key would only bloat the index.
const maxIDBytes = 1024

// BeginWorkflowRunParams is durable/begin_workflow_run's input.
type BeginWorkflowRunParams struct {
	RunID   string          `json:"run_id"`
	PhaseID string          `json:"phase_id"`
	Inputs  json.RawMessage `json:"inputs,omitempty"`
}

// Validate checks the required ids.
func (p BeginWorkflowRunParams) Validate() error {
	return firstError(requireID("run_id", p.RunID), requireID("phase_id", p.PhaseID))
}

// BeginWorkflowRunResult is its output.
type BeginWorkflowRunResult struct {
	Epoch uint64 `json:"epoch"`
}

// BeginStepParams is durable/begin_step's input.
type BeginStepParams struct {
	RunID              string          `json:"run_id"`
	PhaseID            string          `json:"phase_id"`
	StepName           string          `json:"step_name"`
	IdempotencyKey     string          `json:"idempotency_key"`
	Payload            json.RawMessage `json:"payload,omitempty"`
	ReservationTTLSecs *uint64         `json:"reservation_ttl_secs,omitempty"`
}

// Validate checks the required ids.
func (p BeginStepParams) Validate() error {
	return firstError(requireID("run_id", p.RunID), requireID("phase_id", p.PhaseID),
		requireID("step_name", p.StepName), requireID("idempotency_key", p.IdempotencyKey))
}

// BeginStepResult is its output (BeginStepResponse).
type BeginStepResult struct {
	PriorError           json.RawMessage `json:"prior_error,omitempty"`
	PriorOutput          json.RawMessage `json:"prior_output,omitempty"`
	ReservationExpiresAt string          `json:"reservation_expires_at,omitempty"`
	Status               string          `json:"status"`
	StepID               string          `json:"step_id"`
}

// CommitStepParams is durable/commit_step's input. Outcome is a pointer so
// a missing outcome (a decode error in the Rust crate: -32602) is told apart
// from a wrong one (-32307).
type CommitStepParams struct {
	StepID  string          `json:"step_id"`
	Outcome *string         `json:"outcome"`
	Output  json.RawMessage `json:"output,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// CodeInvalidCommitOutcome and the kind's other codes (durable.md §4.1).
const (
	CodeRunNotFound            = -32301
	CodeStepNotFound           = -32302
	CodeReservationExpired     = -32303
	CodeBackendUnavailable     = -32304
	CodeProjectBindingMismatch = -32305
	CodeReplayNondeterminism   = -32306
	CodeInvalidCommitOutcome   = -32307
)

// Validate checks outcome first, as the kind requires, then the step id and
// the shape of error. Payload sizes are checked by the handler, which knows
// the configured limit.
func (p CommitStepParams) Validate() error {
	if p.Outcome == nil {
		return pluginkit.InvalidParams("invalid params: field %q is required", "outcome").WithData("field", "outcome")
	}
	if o := *p.Outcome; o != "success" && o != "error" {
		return pluginkit.InvalidParams("invalid commit outcome %q: want \"success\" or \"error\"", clipString(o, 64)).
			WithCode(CodeInvalidCommitOutcome).WithData("field", "outcome")
	}
	if err := requireID("step_id", p.StepID); err != nil {
		return err
	}
	_, err := normalizeStepError(p.Error)
	return err
}

// StepError is the kind's structured error (keys code, details, message).
type StepError struct {
	Code    string          `json:"code"`
	Details json.RawMessage `json:"details,omitempty"`
	Message string          `json:"message"`
}

// AckResult is the output of commit_step and abandon_step.
type AckResult struct {
	Ack bool `json:"ack"`
}

// AbandonStepParams is durable/abandon_step's input.
type AbandonStepParams struct {
	StepID string  `json:"step_id"`
	Reason *string `json:"reason,omitempty"`
}

// Validate checks the step id.
func (p AbandonStepParams) Validate() error { return requireID("step_id", p.StepID) }

// RecoverInFlightParams is durable/recover_in_flight's input.
type RecoverInFlightParams struct {
	SinceEpoch *uint64 `json:"since_epoch"`
}

// Validate requires since_epoch (0 means "everything").
func (p RecoverInFlightParams) Validate() error {
	if p.SinceEpoch == nil {
		return pluginkit.InvalidParams("invalid params: field %q is required", "since_epoch").WithData("field", "since_epoch")
	}
	return nil
}

// RecoverInFlightResult is its output.
type RecoverInFlightResult struct {
	InFlight []InFlightRun `json:"in_flight"`
}

// InFlightRun is a run with outstanding reservations.
type InFlightRun struct {
	LastCommittedStep *string      `json:"last_committed_step,omitempty"`
	PhaseID           string       `json:"phase_id"`
	ReplayState       *ReplayState `json:"replay_state,omitempty"`
	RunID             string       `json:"run_id"`
}

// ReplayState is this store's replay_state: the run's current epoch (the
// cursor a caller passes back as since_epoch, which InFlightRun otherwise
// lacks) and its outstanding reservations.
type ReplayState struct {
	Epoch       uint64        `json:"epoch"`
	Outstanding []Outstanding `json:"outstanding"`
}

// Outstanding is one reservation not yet committed or abandoned.
type Outstanding struct {
	Expired              bool   `json:"expired"`
	IdempotencyKey       string `json:"idempotency_key"`
	ReservationExpiresAt string `json:"reservation_expires_at"`
	ReservedAt           string `json:"reserved_at"`
	StepID               string `json:"step_id"`
	StepName             string `json:"step_name"`
}

// QueryRunParams is durable/query_run's input.
type QueryRunParams struct {
	RunID   string `json:"run_id"`
	PhaseID string `json:"phase_id"`
}

// Validate checks the required ids.
func (p QueryRunParams) Validate() error {
	return firstError(requireID("run_id", p.RunID), requireID("phase_id", p.PhaseID))
}

// QueryRunResult is its output (QueryRunResponse).
type QueryRunResult struct {
	PhaseID string       `json:"phase_id"`
	RunID   string       `json:"run_id"`
	Status  string       `json:"status"`
	Steps   []StepRecord `json:"steps"`
}

// StepRecord is one committed step.
type StepRecord struct {
	CommittedAt    string          `json:"committed_at"`
	Error          json.RawMessage `json:"error,omitempty"`
	IdempotencyKey string          `json:"idempotency_key"`
	Outcome        string          `json:"outcome"`
	Output         json.RawMessage `json:"output,omitempty"`
	StepID         string          `json:"step_id"`
	StepName       string          `json:"step_name"`
}

// Capabilities is kind_capabilities.durable_store.extra
// (DurableStoreCapabilities); every field is always emitted.
type Capabilities struct {
	DefaultReservationTTLSecs uint64 `json:"default_reservation_ttl_secs"`
	MaxPayloadBytes           uint64 `json:"max_payload_bytes"`
	SupportsRecovery          bool   `json:"supports_recovery"`
}

// CrateVersion is the protocol crate this plugin speaks.
const CrateVersion = "0.1.0"

func requireID(field, v string) error {
	switch {
	case v == "":
		return pluginkit.InvalidParams("invalid params: field %q is required and must be a non-empty string", field).WithData("field", field)
	case len(v) > maxIDBytes:
		return pluginkit.InvalidParams("invalid params: field %q is %d bytes, the limit is %d", field, len(v), maxIDBytes).WithData("field", field)
	}
	return nil
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
