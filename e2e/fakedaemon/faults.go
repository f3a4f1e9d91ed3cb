package fakedaemon

import (
	"fmt"
	"time"
)

// fault is what happens to one method's requests instead of, or before,
// the normal answer.
type fault struct {
	delay   time.Duration
	drop    bool
	garbage bool
	err     *controlError
}

func (d *Daemon) setFault(method string, f func(*fault)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	cur := d.faults[method]
	f(&cur)
	d.faults[method] = cur
}

func (d *Daemon) fault(method string) (fault, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f, ok := d.faults[method]
	return f, ok
}

// SetDelay makes method's replies slow. The connection is held up meanwhile,
// as on the real daemon (unary requests are awaited one at a time).
func (d *Daemon) SetDelay(method string, delay time.Duration) {
	d.setFault(method, func(f *fault) { f.delay = delay })
}

// DropOn closes the connection when method arrives (after any delay),
// without answering: a daemon that dies mid-call.
func (d *Daemon) DropOn(method string) {
	d.setFault(method, func(f *fault) { f.drop = true })
}

// GarbageOn answers method with a line that is not JSON.
func (d *Daemon) GarbageOn(method string) {
	d.setFault(method, func(f *fault) { f.garbage = true })
}

// FailWith answers method with a control error of category (§1.6 codes and
// message prefixes).
func (d *Daemon) FailWith(method, category, message string) {
	e := categoryError(category, message)
	d.setFault(method, func(f *fault) { f.err = e })
}

// Deny answers method as RBAC in enforce mode does: -32602 with category
// permission_denied (policy.rs, not the -32600 of the table).
func (d *Daemon) Deny(method string) {
	e := &controlError{code: -32602, message: "permission denied: " + method + " is not allowed for this principal", category: "permission_denied"}
	d.setFault(method, func(f *fault) { f.err = e })
}

// ClearFaults removes every injected fault.
func (d *Daemon) ClearFaults() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.faults = map[string]fault{}
}

// controlError is ControlError on the wire: code, "<prefix>: <text>", and
// data {category} (absent for the protocol-level errors).
type controlError struct {
	code     int
	message  string
	category string
}

func (e *controlError) wire() map[string]any {
	m := map[string]any{"code": e.code, "message": e.message}
	if e.category != "" {
		m["data"] = map[string]string{"category": e.category}
	}
	return m
}

// categoryCodes is §1.6's table.
var categoryCodes = map[string]struct {
	code   int
	prefix string
}{
	"not_found":         {-32602, "not found"},
	"invalid_request":   {-32602, "invalid request"},
	"permission_denied": {-32600, "permission denied"},
	"unavailable":       {-32603, "unavailable"},
	"not_supported":     {-32001, "not supported"},
	"conflict":          {-32600, "conflict"},
	"internal":          {-32603, "internal"},
}

func categoryError(category, text string) *controlError {
	c, ok := categoryCodes[category]
	if !ok {
		return &controlError{code: -32603, message: text, category: category}
	}
	return &controlError{code: c.code, message: c.prefix + ": " + text, category: category}
}

func errf(category, format string, args ...any) *controlError {
	return categoryError(category, fmt.Sprintf(format, args...))
}

func unknownMethod(m string) *controlError {
	return &controlError{code: -32601, message: "unknown control method: " + m}
}

func invalidParams(err error) *controlError {
	return &controlError{code: -32602, message: "invalid params: " + err.Error()}
}
