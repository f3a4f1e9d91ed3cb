//go:build unix

package notifier

import (
	"errors"
	"syscall"
)

// processAlive reports whether pid names a running process (EPERM means it
// exists but belongs to someone else). A dead owner's claims are recovered
// at start instead of waiting out the lease.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
