//go:build !linux

package pluginkit

import "os"

// reserveStdout keeps frames on the real stdout and points os.Stdout at
// stderr, so Go code cannot print onto the protocol stream. (Only Linux
// also redirects fd 1 for C code.)
func reserveStdout() (*os.File, error) {
	proto := os.Stdout
	os.Stdout = os.Stderr
	return proto, nil
}
