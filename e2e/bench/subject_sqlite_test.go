package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
)

// BenchmarkSubjectSQLite measures animus-subject-sqlite through the built
// binary on databases of 10k and 100k subjects, seeded with direct SQL by
// the plugin module's test tool (one transaction, no ANALYZE, as a
// database the plugin grew itself). Per size:
//
//	list    task/list {status:[ready], labels_any:[backend,p1], limit:50}, repeated
//	        (the daemon's polling: the total comes from the per-generation cache)
//	list-after-write  the same list right after an (untimed) update, so the
//	        cached total is a generation behind: the plugin brings it
//	        forward by its own write's before/after (storage.Totals)
//	        instead of recounting; another process's write would recount
//	get     task/get of a random subject
//	update  task/update labels_add on a random subject (one write transaction)
//	cold    spawn → initialize reply, on the seeded database
//
// Each reports p50/p99 in µs; at 100k, p50-growth is p50(100k)/p50(10k):
// the cost of ten times more subjects (1.0 = none).
func BenchmarkSubjectSQLite(b *testing.B) {
	bin := binaries.Path(b, "animus-subject-sqlite")
	dir := b.TempDir()
	p50s := map[string]time.Duration{}
	for _, n := range []int{10_000, 100_000} {
		db := filepath.Join(dir, fmt.Sprintf("s%d.db", n))
		seedSubjects(b, db, n)
		size := fmt.Sprintf("n=%dk", n/1000)
		var sample []string
		b.Run(size+"/list", func(b *testing.B) {
			c := spawnSubjectSQLite(b, bin, db)
			sample = sampleIDs(b, c)
			const params = `{"status":["ready"],"labels_any":["backend","p1"],"limit":50}`
			measure(b, p50s, size, "list", nil, func() {
				if line := c.roundTrip(b, "task/list", params); !bytes.Contains(line, []byte(`"next_cursor"`)) {
					b.Fatalf("list: %.200s", line)
				}
			})
		})
		b.Run(size+"/list-after-write", func(b *testing.B) {
			c := spawnSubjectSQLite(b, bin, db)
			const params = `{"status":["ready"],"labels_any":["backend","p1"],"limit":50}`
			i := 0
			write := func() { // untimed: starts a new change-log generation
				i++
				c.roundTrip(b, "task/update", fmt.Sprintf(`{"id":"%s","patch":{"custom":{"n":%d}}}`, sample[i%len(sample)], i))
			}
			measure(b, p50s, size, "list-after-write", write, func() {
				if line := c.roundTrip(b, "task/list", params); !bytes.Contains(line, []byte(`"next_cursor"`)) {
					b.Fatalf("list: %.200s", line)
				}
			})
		})
		b.Run(size+"/get", func(b *testing.B) {
			c := spawnSubjectSQLite(b, bin, db)
			rng := rand.New(rand.NewPCG(1, uint64(n)))
			measure(b, p50s, size, "get", nil, func() {
				id := sample[rng.IntN(len(sample))]
				if line := c.roundTrip(b, "task/get", `{"id":"`+id+`"}`); !bytes.Contains(line, []byte(`"result"`)) {
					b.Fatalf("get: %.200s", line)
				}
			})
		})
		b.Run(size+"/update", func(b *testing.B) {
			c := spawnSubjectSQLite(b, bin, db)
			rng := rand.New(rand.NewPCG(2, uint64(n)))
			i := 0
			measure(b, p50s, size, "update", nil, func() {
				i++
				id := sample[rng.IntN(len(sample))]
				params := fmt.Sprintf(`{"id":"%s","patch":{"labels_add":["bench-%d"],"labels_remove":["bench-%d"]}}`, id, i, i-1)
				if line := c.roundTrip(b, "task/update", params); !bytes.Contains(line, []byte(`"result"`)) {
					b.Fatalf("update: %.200s", line)
				}
			})
		})
		b.Run(size+"/cold", func(b *testing.B) {
			measure(b, p50s, size, "cold", nil, func() {
				c := spawnSubjectSQLite(b, bin, db)
				c.in.Close()
				c.cmd.Wait()
			})
		})
	}
}

// measure times fn b.N times (after an untimed prep, when given) and
// reports p50/p99, and at 100k the p50 growth over 10k.
func measure(b *testing.B, p50s map[string]time.Duration, size, op string, prep, fn func()) {
	fn() // warm: page cache, prepared paths
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		if prep != nil {
			b.StopTimer()
			prep()
			b.StartTimer()
		}
		t0 := time.Now()
		fn()
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p50, p99 := lat[(len(lat)-1)*50/100], lat[(len(lat)-1)*99/100]
	b.ReportMetric(float64(p50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(p99.Microseconds()), "p99-µs")
	p50s[size+op] = p50
	if base, ok := p50s["n=10k"+op]; ok && size == "n=100k" && base > 0 {
		b.ReportMetric(float64(p50)/float64(base), "p50-growth")
	}
}

// spawnSubjectSQLite starts the plugin on db and completes the handshake;
// with the spawn included, this is the cold start.
func spawnSubjectSQLite(b *testing.B, bin, db string) *child {
	b.Helper()
	c := start(b, bin, filepath.Dir(db), "ANIMUS_SQLITE_DB_PATH="+db)
	b.Cleanup(c.stop)
	c.handshake(b)
	return c
}

// sampleIDs lists 1000 subject ids to pick from.
func sampleIDs(b *testing.B, c *child) []string {
	line := c.roundTrip(b, "task/list", `{"limit":1000}`)
	var resp struct {
		Result struct {
			Subjects []struct {
				ID string `json:"id"`
			} `json:"subjects"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &resp); err != nil || len(resp.Result.Subjects) != 1000 {
		b.Fatalf("sample: %v %.200s", err, line)
	}
	ids := make([]string, len(resp.Result.Subjects))
	for i, s := range resp.Result.Subjects {
		ids[i] = s.ID
	}
	return ids
}

var subjectToolOnce sync.Once

// seedSubjects fills db with n subjects through the plugin module's test
// tool (built once).
func seedSubjects(b *testing.B, db string, n int) {
	b.Helper()
	root, err := binaries.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	tool := filepath.Join(root, ".cache", "e2e-bin", "subject-sqlite-testtool")
	var buildErr error
	subjectToolOnce.Do(func() {
		cmd := exec.Command("go", "build", "-o", tool, "./plugins/subject-sqlite/internal/testtool")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if buildErr != nil {
		b.Fatal(buildErr)
	}
	t0 := time.Now()
	if out, err := exec.Command(tool, "seed", "-db", db, "-n", fmt.Sprint(n)).CombinedOutput(); err != nil {
		b.Fatalf("seed %d: %v %s", n, err, out)
	}
	b.Logf("seeded %d subjects in %v", n, time.Since(t0).Round(time.Millisecond))
}
