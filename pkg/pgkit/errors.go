package pgkit

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrCommitUnknown is wrapped by Tx's error when the connection was lost
// (or the attempt timed out) while COMMIT was in flight: the transaction
// may or may not have committed. Tx does not retry it; the caller must
// find out from the data (an idempotency key) or report the uncertainty.
var ErrCommitUnknown = errors.New("pgkit: connection lost during COMMIT; the transaction may or may not have committed")

// ErrTimeout is wrapped by Tx's error when an attempt ran out of
// OpTimeout, so a server that stopped answering never hangs a call. It
// counts as unavailable.
var ErrTimeout = errors.New("pgkit: operation timed out")

// SQLSTATE codes pgkit acts on.
const (
	CodeSerializationFailure = "40001"
	CodeDeadlockDetected     = "40P01"
	CodeAdminShutdown        = "57P01"
	CodeCrashShutdown        = "57P02"
	CodeCannotConnectNow     = "57P03"
)

// SQLState returns the SQLSTATE of the server error in err's chain, or "".
func SQLState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// IsUnavailable reports whether err means the database cannot be reached
// or went away: a failed dial (refused, timed out, unresolvable), a
// connection reset or closed mid-conversation, SQLSTATE class 08, an
// administrator or crash shutdown (57P01, 57P02), a server still starting
// (57P03), an attempt that ran out of OpTimeout, or a commit whose outcome
// is unknown. Callers map it to JSON-RPC -32205 (retriable). The caller's
// own cancellation is not unavailability.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrCommitUnknown) || errors.Is(err, ErrTimeout) {
		return true
	}
	// A server that answered decides by its code, even inside a
	// ConnectError: a refused password (28P01) is not an outage.
	if code := SQLState(err); code != "" {
		return strings.HasPrefix(code, "08") || code == CodeAdminShutdown ||
			code == CodeCrashShutdown || code == CodeCannotConnectNow
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return !errors.Is(err, context.Canceled)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// IsRetryable reports whether running the whole transaction again is
// safe and may succeed: a serialization failure (40001), a deadlock
// (40P01), or unavailability before COMMIT was sent. ErrCommitUnknown is
// never retryable.
func IsRetryable(err error) bool {
	if err == nil || errors.Is(err, ErrCommitUnknown) {
		return false
	}
	switch SQLState(err) {
	case CodeSerializationFailure, CodeDeadlockDetected:
		return true
	}
	return IsUnavailable(err)
}

// isTimeout: the error is a dial or I/O timeout. Tx does not retry it: the
// attempt already spent its share of the budget waiting, and the caller
// learns sooner that the server is unreachable.
func isTimeout(err error) bool {
	if errors.Is(err, ErrTimeout) || pgconn.Timeout(err) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// CodeLockNotAvailable is lock_not_available: a wait past lock_timeout.
const CodeLockNotAvailable = "55P03"

// IsLockTimeout reports whether err is a lock wait that outlasted
// lock_timeout (another writer held the lock): busy, a retry may succeed.
func IsLockTimeout(err error) bool { return SQLState(err) == CodeLockNotAvailable }
