//go:build !linux

package pluginkit

import "os"

// reserveStdio keeps frames on the real stdout and points os.Stdout at
// stderr, so Go code cannot print onto the protocol stream. (Only Linux
// also redirects fd 1 for C code and serves the pipes from the netpoller.)
func reserveStdio() (in, out *os.File, err error) {
	out = os.Stdout
	os.Stdout = os.Stderr
	return os.Stdin, out, nil
}
