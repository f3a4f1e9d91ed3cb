//go:build !linux

package conformance

import (
	"errors"
	"os"
)

func openPTY() (master, slave *os.File, err error) {
	return nil, nil, errors.New("pseudo-terminals are only opened on Linux")
}
