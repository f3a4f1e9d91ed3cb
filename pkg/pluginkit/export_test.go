package pluginkit

import "io"

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// PipeForTest returns a pipe whose reader blocks until the writer closes,
// like a host's stdin.
func PipeForTest() (*io.PipeReader, *io.PipeWriter) { return io.Pipe() }
