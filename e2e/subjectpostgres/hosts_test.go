package subjectpostgres

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// TestTwoHostsWatch is the cross-host watch proof. Two hosts (two project
// roots, one DSN and schema) each run a long-lived process holding a
// subject/watch in the daemon's form and a writer process; after a few
// creates, the writers of both hosts send 1,000 task/update each, at the
// same time (four lanes per host). Each host's watch must then have
// received exactly the change-log rows committed after it opened — the
// event JSON of every row, byte for byte, in seq order: nothing missing,
// nothing repeated, nothing reordered, whichever host wrote it. The
// second variant terminates both watchers' LISTEN sessions
// (pg_terminate_backend) after about 500 updates: the NOTIFYs sent while
// nobody listened are lost, and the watches must still deliver the same,
// complete, ordered log, because the log and not the notification is the
// record. Latency from an update's reply to the other host's event is
// logged (p50/p99), never asserted: the only timing bound is that
// everything arrives within a generous 30 s of the last write.
func TestTwoHostsWatch(t *testing.T) {
	for _, tc := range []struct {
		name      string
		terminate bool
	}{{"plain", false}, {"LISTEN terminated mid-run", true}} {
		t.Run(tc.name, func(t *testing.T) {
			twoHostsWatch(t, tc.terminate)
		})
	}
}

func twoHostsWatch(t *testing.T, terminate bool) {
	const perHost, lanes, deliveryBound = 1000, 4, 30 * time.Second
	s := pgns.Subject.New(t)
	declared := e2etest.Declared(t, binaryName)
	hosts := []*host{newHost(t, "a", s, declared), newHost(t, "b", s, declared)}
	watchIDs := []string{"100", `"watch-b"`} // echoed verbatim: an integer and a string id
	var watchers, writers []*fakehost.Host
	for _, h := range hosts {
		watchers = append(watchers, h.start())
		writers = append(writers, h.start())
	}

	// Subjects created before the watches open are not theirs to see.
	var ids []string
	for i := range 3 {
		ids = append(ids, call[subject](t, writers[i%2], "task/create", map[string]any{"title": fmt.Sprintf("before %d", i)}).ID)
	}
	for i, w := range watchers {
		watch(t, w, watchIDs[i], "subject/watch", nil) // the daemon's form: no params
	}
	// Nothing was written between the creates and the acknowledgements, so
	// a watch starts right after this seq.
	start := lastSeq(t, s)
	// Creates after the watches opened are theirs: one from each host.
	for i, w := range writers {
		ids = append(ids, call[subject](t, w, "task/create", map[string]any{"title": fmt.Sprintf("after %d", i)}).ID)
	}

	// The writers. Every update carries a unique custom.w, which names it
	// in the event its commit produces; replied[w] is when its writer got
	// the reply.
	var (
		mu       sync.Mutex
		replied  = map[string]time.Time{}
		done     atomic.Int32
		killOnce sync.Once
		killed   = make(chan int, 1)
		wg       sync.WaitGroup
	)
	kill := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		n, err := listenSessions(ctx, s.DSN, watchers, true)
		if err != nil {
			t.Errorf("terminating the watchers' LISTEN sessions: %v", err)
		}
		killed <- n
	}
	for hi, h := range hosts {
		for lane := range lanes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := lane; i < perHost; i += lanes {
					key := fmt.Sprintf("%s-%04d", h.name, i)
					id := ids[(i+hi)%len(ids)]
					var got subject
					rpcErr, err := e2etest.Try(writers[hi], time.Minute, "task/update",
						map[string]any{"id": id, "patch": map[string]any{"custom": map[string]any{"w": key, "n": i}}}, &got)
					at := time.Now()
					if err == nil && rpcErr != nil {
						err = rpcErr
					}
					if err != nil {
						t.Errorf("host %s update %s: %v", h.name, key, err)
						return
					}
					mu.Lock()
					replied[key] = at
					mu.Unlock()
					if done.Add(1) == perHost/2 && terminate {
						// In its own goroutine: the writers keep writing while
						// the sessions die.
						killOnce.Do(func() { go kill() })
					}
				}
			}()
		}
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	writesDone := time.Now()
	if terminate {
		select {
		case n := <-killed:
			// One LISTEN session per watcher process at least; a watcher
			// that had already redialled could show a second.
			if n < len(watchers) {
				t.Fatalf("terminated %d LISTEN sessions of the watchers, want at least %d", n, len(watchers))
			}
			t.Logf("terminated %d LISTEN sessions after ~%d updates", n, perHost/2)
		case <-time.After(time.Minute):
			t.Fatal("the LISTEN termination never finished")
		}
		// Each watcher dials its LISTEN session again (the delivery below
		// could come from the poll alone; this is the redial).
		deadline := time.Now().Add(deliveryBound)
		for {
			n, err := listenSessions(e2etest.Ctx(t, 10*time.Second), s.DSN, watchers, false)
			if err != nil {
				t.Fatal(err)
			}
			if n >= len(watchers) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d watchers listen again %v after their sessions were terminated", n, len(watchers), deliveryBound)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// The record: every commit after the watches opened, in seq order.
	want := changeLog(t, s, start)
	if len(want) != 2*perHost+len(writers) {
		t.Fatalf("the change log holds %d rows after seq %d, want %d updates + %d creates", len(want), start, 2*perHost, len(writers))
	}
	for i, r := range want {
		if r.Seq != start+1+int64(i) {
			t.Fatalf("the change log has a gap: row %d has seq %d, want %d", i, r.Seq, start+1+int64(i))
		}
	}

	for i, w := range watchers {
		name := hosts[i].name
		deadline := writesDone.Add(deliveryBound)
		var got []received
		for {
			got = events(t, w, watchIDs[i])
			if len(got) >= len(want) || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if len(got) < len(want) {
			t.Fatalf("host %s: %d of %d events within %v of the last write\n--- stderr ---\n%s", name, len(got), len(want), deliveryBound, w.Stderr())
		}
		// Several poll intervals more: a duplicate or a stray event would
		// show by now.
		time.Sleep(time.Second)
		got = events(t, w, watchIDs[i])
		if len(got) != len(want) {
			t.Fatalf("host %s: %d events, want exactly %d (the change log after seq %d)", name, len(got), len(want), start)
		}
		for j := range want {
			if !bytes.Equal(compact(t, got[j].Event), compact(t, want[j].Event)) {
				t.Fatalf("host %s: event %d is not change-log row seq %d\n got %s\nwant %s", name, j, want[j].Seq, got[j].Event, want[j].Event)
			}
		}
		for _, e := range got {
			if err := schemas(t).Validate(schemacheck.SubjectProtocol, "SubjectChangedEvent", e.Event); err != nil {
				t.Fatalf("host %s: event is not a SubjectChangedEvent: %v\n%s", name, err, e.Event)
			}
		}
		logLatency(t, name, hosts[1-i].name, got, replied)
	}
}

// logLatency logs, for the updates the other host wrote, the time from
// the writer's reply to this host's event: information, not an assertion
// (timing on a shared CI machine is not the plugin's behaviour).
func logLatency(t *testing.T, watcher, writer string, got []received, replied map[string]time.Time) {
	t.Helper()
	var lat []time.Duration
	for _, e := range got {
		var ev struct {
			Subject struct {
				Custom struct {
					W string `json:"w"`
				} `json:"custom"`
			} `json:"subject"`
		}
		if err := json.Unmarshal(e.Event, &ev); err != nil {
			t.Fatalf("event: %v", err)
		}
		if at, ok := replied[ev.Subject.Custom.W]; ok && strings.HasPrefix(ev.Subject.Custom.W, writer+"-") {
			lat = append(lat, e.At.Sub(at))
		}
	}
	if len(lat) == 0 {
		t.Fatalf("host %s saw none of host %s's updates", watcher, writer)
	}
	slices.Sort(lat)
	q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	note := ""
	if lat[0] < 0 {
		note = " (below zero: the event arrived before the writer read its own reply)"
	}
	t.Logf("host %s's updates → host %s's watch: %d events, latency p50 %v p99 %v max %v%s",
		writer, watcher, len(lat), q(0.50), q(0.99), lat[len(lat)-1], note)
}

func compact(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("not JSON: %v: %s", err, raw)
	}
	return b.Bytes()
}

// listenSessions counts the LISTEN sessions of procs alone — the sessions
// whose client port is one of the processes' TCP sockets (Linux /proc) —
// and with terminate calls pg_terminate_backend on them (waiting up to 5 s
// each), returning how many it ended: other tests sharing the cluster
// keep theirs.
func listenSessions(ctx context.Context, dsn string, procs []*fakehost.Host, terminate bool) (int, error) {
	var ports []int32
	for _, p := range procs {
		ps, err := localPorts(p.Pid())
		if err != nil {
			return 0, err
		}
		ports = append(ports, ps...)
	}
	if len(ports) == 0 {
		return 0, fmt.Errorf("the watcher processes hold no TCP socket")
	}
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer c.Close(context.Background())
	var n int
	err = c.QueryRow(ctx, `SELECT count(*) FILTER (WHERE NOT $4 OR pg_terminate_backend(pid, 5000))
		FROM pg_stat_activity
		WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'
		AND application_name = $1 AND query = $2 AND client_port = ANY($3)`,
		pgns.Subject.Binary, listenQuery, ports, terminate).Scan(&n)
	return n, err
}

// localPorts lists the local ports of pid's TCP sockets: the inodes of
// its socket descriptors looked up in /proc/net/tcp{,6}.
func localPorts(pid int) ([]int32, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		if inode, ok := strings.CutPrefix(link, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	var ports []int32
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || !inodes[fields[9]] {
				continue
			}
			_, hexPort, _ := strings.Cut(fields[1], ":")
			if port, err := strconv.ParseInt(hexPort, 16, 32); err == nil {
				ports = append(ports, int32(port))
			}
		}
		f.Close()
	}
	return ports, nil
}
