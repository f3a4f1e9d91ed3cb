package schemacheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Set is a compiled collection of every per-type schema under shared/schemas,
// plus the method→type tables used by ValidateResult and ValidateNotification.
// It is safe for concurrent use.
type Set struct {
	dir     string
	schemas map[string]*jsonschema.Schema // key "crate/Type"

	mu            sync.RWMutex
	results       map[string]TypeRef
	notifications map[string]TypeRef
}

// TypeRef names one schema file: shared/schemas/<Crate>/<Type>.json.
type TypeRef struct {
	Crate string
	Type  string
}

// payloadFields names, for a notification that wraps its typed payload
// with the request id, the params member to validate (log_storage/event is
// {id, entry}, spec §7.4; subject/changed is {id, event}). A notification without a row here is validated
// whole (the flat trigger/event). Either way, a stream's error form,
// params {..., "error": {...}}, is checked as an RpcError instead, since it
// ends the stream in place of a payload.
var payloadFields = map[string]string{
	"log_storage/event": "entry",
	"subject/changed":   "event", // subject.md §1
}

func (r TypeRef) String() string { return r.Crate + "/" + r.Type }

// Crate folder names under shared/schemas.
const (
	PluginProtocol     = "animus-plugin-protocol"
	SubjectProtocol    = "animus-subject-protocol"
	TriggerProtocol    = "animus-trigger-protocol"
	LogStorageProtocol = "animus-log-storage-protocol"
	TransportProtocol  = "animus-transport-protocol"
	QueueProtocol      = "animus-queue-protocol"
	DurableProtocol    = "animus-durable-store-protocol"
	NotifierProtocol   = "animus-notifier-protocol"
)

// resultTypes maps a host→plugin method to the schema of its `result`, and
// notificationTypes a plugin→host notification to the schema of its
// `params`. The rows live in one file per kind (tables_<kind>.go), each
// checked against that kind's reference note: several results are
// wrappers ({"subject": Subject}, {"ok": true}) with no schema of their
// own, and a guessed row would turn a schema check into a false failure.
// Load verifies that every row names an existing schema.
var (
	resultTypes       = mergeTables(lifecycleResults, subjectResults, queueResults, durableResults, notifierResults, triggerResults, logStorageResults, transportResults)
	notificationTypes = mergeTables(subjectNotifications, triggerNotifications, logStorageNotifications)
)

// lifecycleResults are the methods every kind shares.
var lifecycleResults = map[string]TypeRef{
	"initialize":   {PluginProtocol, "InitializeResult"},
	"health/check": {PluginProtocol, "HealthCheckResult"},
}

func mergeTables(tables ...map[string]TypeRef) map[string]TypeRef {
	out := map[string]TypeRef{}
	for _, t := range tables {
		for k, v := range t {
			if _, dup := out[k]; dup {
				panic("schemacheck: method " + k + " is in two tables")
			}
			out[k] = v
		}
	}
	return out
}

// Dir returns the shared/ directory the Set was loaded from.
func (s *Set) Dir() string { return s.dir }

// Has reports whether a schema exists for crate/typ.
func (s *Set) Has(crate, typ string) bool {
	_, ok := s.schemas[crate+"/"+typ]
	return ok
}

// Types lists every loaded "crate/Type", sorted.
func (s *Set) Types() []string {
	out := make([]string, 0, len(s.schemas))
	for k := range s.schemas {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Validate checks doc against shared/schemas/<crate>/<typ>.json. An unknown
// type is an error (a typo must not turn into a silent pass).
func (s *Set) Validate(crate, typ string, doc []byte) error {
	sch, ok := s.schemas[crate+"/"+typ]
	if !ok {
		return fmt.Errorf("schemacheck: no schema %s/%s", crate, typ)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("schemacheck: %s/%s: not JSON: %w", crate, typ, err)
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("schemacheck: %s/%s: %w", crate, typ, err)
	}
	return nil
}

// ValidateManifest checks a `--manifest` document against PluginManifest.
func (s *Set) ValidateManifest(raw []byte) error {
	return s.Validate(PluginProtocol, "PluginManifest", raw)
}

// ValidateFrame checks one plugin→host frame against the envelope schema its
// shape calls for: a frame with "id" and "method" is a request, one with only
// "method" a notification, anything else a response.
func (s *Set) ValidateFrame(raw []byte) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return fmt.Errorf("schemacheck: frame is not a JSON object: %w", err)
	}
	_, hasID := keys["id"]
	_, hasMethod := keys["method"]
	switch {
	case hasMethod && hasID:
		return s.Validate(PluginProtocol, "RpcRequest", raw)
	case hasMethod:
		return s.Validate(PluginProtocol, "RpcNotification", raw)
	default:
		return s.Validate(PluginProtocol, "RpcResponse", raw)
	}
}

// ValidateResult checks the `result` of a response to method against the
// registered result type. Methods without an entry pass (nil): the table
// grows as plugin kinds are implemented.
func (s *Set) ValidateResult(method string, result []byte) error {
	s.mu.RLock()
	ref, ok := s.results[method]
	s.mu.RUnlock()
	if !ok {
		return nil
	}
	if err := s.Validate(ref.Crate, ref.Type, result); err != nil {
		return fmt.Errorf("result of %s: %w", method, err)
	}
	return nil
}

// ValidateNotification checks the params of a plugin→host notification
// against the registered type; unknown methods pass.
func (s *Set) ValidateNotification(method string, params []byte) error {
	s.mu.RLock()
	ref, ok := s.notifications[method]
	s.mu.RUnlock()
	if !ok {
		return nil
	}
	if len(params) == 0 {
		return fmt.Errorf("params of %s: missing (want %s)", method, ref)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(params, &members); err != nil {
		return fmt.Errorf("params of %s: not an object: %w", method, err)
	}
	if e, ok := members["error"]; ok {
		if err := s.Validate(PluginProtocol, "RpcError", e); err != nil {
			return fmt.Errorf("params.error of %s: %w", method, err)
		}
		return nil
	}
	doc, where := params, "params"
	if field := payloadFields[method]; field != "" {
		if doc, ok = members[field]; !ok {
			return fmt.Errorf("params of %s: no %q member (want %s)", method, field, ref)
		}
		where += "." + field
	}
	if err := s.Validate(ref.Crate, ref.Type, doc); err != nil {
		return fmt.Errorf("%s of %s: %w", where, method, err)
	}
	return nil
}

// RegisterResult maps method's result to crate/typ on this Set (tests of one
// kind can add entries without editing the shared table).
func (s *Set) RegisterResult(method, crate, typ string) error {
	return s.register(s.results, method, crate, typ)
}

// RegisterNotification maps a notification's params to crate/typ on this Set.
func (s *Set) RegisterNotification(method, crate, typ string) error {
	return s.register(s.notifications, method, crate, typ)
}

func (s *Set) register(table map[string]TypeRef, method, crate, typ string) error {
	if !s.Has(crate, typ) {
		return errors.New("schemacheck: no schema " + crate + "/" + typ)
	}
	s.mu.Lock()
	table[method] = TypeRef{crate, typ}
	s.mu.Unlock()
	return nil
}

func copyTable(m map[string]TypeRef) map[string]TypeRef {
	out := make(map[string]TypeRef, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
