// Command animus-fakedaemon serves the fake control socket of e2e/fakedaemon
// on a path of your choosing, so animus-transport-http (or curl through it)
// can be tried by hand without a real daemon:
//
//	go run ./e2e/cmd/animus-fakedaemon -socket /tmp/animus-demo/control.sock -tick 2s
//
// With -tick it publishes a daemon/event and a daemon/log entry at that
// interval, so SSE streams have something to show.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakedaemon"
)

func main() {
	socket := flag.String("socket", "", "control socket path (default: a temp dir)")
	tick := flag.Duration("tick", 0, "publish a daemon event and a log entry at this interval (0: never)")
	beforeAck := flag.Bool("notify-before-ack", false, "send stream history before the ack, as the real daemon can")
	flag.Parse()
	d, err := fakedaemon.Start(fakedaemon.Options{Path: *socket, NotifyBeforeAck: *beforeAck})
	if err != nil {
		fmt.Fprintln(os.Stderr, "animus-fakedaemon:", err)
		os.Exit(1)
	}
	defer d.Close()
	fmt.Fprintf(os.Stderr, "animus-fakedaemon: serving %s (Ctrl-C to stop)\n", d.Path())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *tick <= 0 {
		<-ctx.Done()
		return
	}
	t := time.NewTicker(*tick)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			payload, _ := json.Marshal(map[string]int{"n": n})
			d.EmitEvent(fakedaemon.Event{Kind: "tick", Payload: payload})
			d.EmitLog(fakedaemon.LogEntry{Message: fmt.Sprintf("tick %d", n)})
		}
	}
}
