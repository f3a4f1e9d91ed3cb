package queuepostgres

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
)

// envHostsN sets the entry count of TestSeveralHostsDrain: the default
// keeps make test quick on two cores; ANIMUS_QUEUE_HOSTS_N=10000 is the
// full proof.
const envHostsN = "ANIMUS_QUEUE_HOSTS_N"

const defaultHostsN = 2000

// TestSeveralHostsDrain: four daemons on four machines (four project
// roots, one DSN and schema) drain N entries concurrently, every call a
// fresh plugin process: queue/v2/lease with max 1–5, then
// queue/v2/completion for every ticket. No fault is injected, so any error
// answer fails. Every entry is handed out exactly once (no entry id in two
// tickets, one queue/v2/lease audit row each), completed exactly once, and
// the queue ends empty.
func TestSeveralHostsDrain(t *testing.T) {
	n := defaultHostsN
	if s := os.Getenv(envHostsN); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			t.Fatalf("%s=%q: want a positive entry count", envHostsN, s)
		}
		n = v
	}
	const hostsN = 4
	q := pgns.Queue.New(t)
	f := newFleet(t, q, "", nil)
	hosts := f.hosts(hostsN)
	ctx := context.Background()

	began := time.Now()
	ids, subjects, err := f.seed(ctx, hosts[0].dir, "HOST", n)
	if err != nil {
		t.Fatal(err)
	}
	seeded := time.Since(began)
	seedProcs := f.procs.Load()

	l := newLedger(subjects)
	draining := time.Now()
	// Generous: about 10 ms of work per process on two busy cores, plus
	// slack; the drain is bounded so a hang fails instead of stalling.
	deadline := 5*time.Minute + time.Duration(n)*60*time.Millisecond
	if err := drainHosts(ctx, hosts, l, drainOptions{deadline: deadline}); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(draining)
	verifyDrained(t, ctx, hosts[0], l, ids)

	procs := f.procs.Load() - seedProcs
	per := l.perHost(hosts)
	for i, k := range per {
		if k == 0 {
			t.Errorf("%s got no ticket: the hosts did not drain side by side", hosts[i].name)
		}
	}
	t.Logf("several hosts: N=%d entries seeded in %v (%d processes, queue/v2/enqueue); %d hosts drained them in %v = %.1f entries/s, "+
		"%d per-call processes (%.1f calls/s), tickets per host %v; -32205 answers: %s",
		n, seeded.Round(time.Millisecond), seedProcs, hostsN, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(),
		procs, float64(procs)/elapsed.Seconds(), per, l.retrySummary())
}
