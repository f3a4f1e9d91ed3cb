package pluginkit

import (
	"os"
	"syscall"
)

// reserveStdio moves the protocol streams where they belong.
//
// Stdout: frames get a private duplicate of fd 1, and fd 1 (and
// os.Stdout) is pointed at stderr, so a stray print, ours or a C
// library's, lands in the log instead of corrupting the stream.
//
// Both protocol fds are switched to non-blocking mode, which makes the
// runtime serve them through its netpoller: a reader waiting for the host
// parks its goroutine instead of holding an OS thread in read(2), and a
// handler made ready meanwhile runs at once rather than after the runtime
// notices the blocked thread (~20 µs, most of a round trip). The pipes are
// the plugin's own ends, so nobody else sees the flag.
func reserveStdio() (in, out *os.File, err error) {
	fd, err := syscall.Dup(1)
	if err != nil {
		return nil, nil, err
	}
	syscall.CloseOnExec(fd)
	if err := syscall.Dup3(2, 1, 0); err != nil {
		syscall.Close(fd)
		return nil, nil, err
	}
	os.Stdout = os.Stderr
	// os.NewFile checks the mode once: set it first. (A second *os.File
	// on the same fd would close it when collected.)
	if isPipe(fd) {
		_ = syscall.SetNonblock(fd, true)
	}
	in = os.Stdin
	if isPipe(0) && syscall.SetNonblock(0, true) == nil {
		in = os.NewFile(0, "/dev/stdin (protocol)")
	}
	return in, os.NewFile(uintptr(fd), "/dev/stdout (protocol)"), nil
}

// isPipe reports whether fd is a pipe or socket, the only kinds the
// netpoller serves; a regular file (a test's redirect) stays blocking.
func isPipe(fd int) bool {
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil {
		return false
	}
	mode := st.Mode & syscall.S_IFMT
	return mode == syscall.S_IFIFO || mode == syscall.S_IFSOCK
}
