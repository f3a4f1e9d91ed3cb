package pluginkit

import (
	"os"
	"syscall"
)

// reserveStdout moves the protocol stream off fd 1: it returns a private
// duplicate of fd 1 for frames and points fd 1 (and os.Stdout) at stderr.
func reserveStdout() (*os.File, error) {
	fd, err := syscall.Dup(1)
	if err != nil {
		return nil, err
	}
	syscall.CloseOnExec(fd)
	if err := syscall.Dup3(2, 1, 0); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	os.Stdout = os.Stderr
	return os.NewFile(uintptr(fd), "/dev/stdout (protocol)"), nil
}
