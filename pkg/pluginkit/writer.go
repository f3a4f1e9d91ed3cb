package pluginkit

import (
	"io"
	"sync"
)

// frameWriter serializes frames onto the host's stream: one complete,
// newline-terminated frame per Write call, under a lock, so frames from
// concurrent handlers and notifiers never interleave.
type frameWriter struct {
	mu     sync.Mutex
	w      io.Writer
	err    error
	failed chan struct{} // closed on the first write error: the host is gone
}

func newFrameWriter(w io.Writer) *frameWriter {
	return &frameWriter{w: w, failed: make(chan struct{})}
}

func (fw *frameWriter) write(frame []byte) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.err != nil {
		return fw.err
	}
	if _, err := fw.w.Write(frame); err != nil {
		fw.err = err
		close(fw.failed)
		return err
	}
	return nil
}
