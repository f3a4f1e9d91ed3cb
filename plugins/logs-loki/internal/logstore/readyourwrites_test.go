package logstore

import (
	"reflect"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/config"
)

// TestReadYourWrites is the conformance round trip while Loki's ingestion
// lags: entries this process stored are visible at once to its query and
// its non-following tail (from the buffer), another process sees them only
// once Loki has them, and when both sources hold an entry it is returned
// once.
func TestReadYourWrites(t *testing.T) {
	f := newLoki(t)
	h := serve(t, New(testConfig(t, f.URL())))
	other := New(testConfig(t, f.URL()))
	entry := wireEntryOf("testkit-store-query-1", time.Now(), "info", "plugin", "log-storage-conformance",
		"testkit.log_storage.testkit-store-query-1", `{"suite":"log-storage-conformance"}`)
	filter := conformanceFilter("testkit.log_storage.testkit-store-query-1", 5, false)

	f.HoldIngestion()
	h.kit.OK(h.t, "log_storage/store", storeParams(t, entry), nil)
	var q QueryResult
	h.kit.OK(h.t, "log_storage/query", filter, &q)
	if len(q.Entries) != 1 || !sameJSON(t, q.Entries[0], entry) {
		t.Fatalf("own query while Loki lags: %s", marshal(t, q))
	}
	id := h.start("log_storage/tail", filter)
	if evs := h.awaitEvents(id, 1); evs[0].Entry == nil || evs[0].Entry.ID != entry["id"] {
		t.Fatalf("tail replay %s", marshal(t, evs))
	}
	if got := mustQuery(t, other, QueryParams{}); len(got.Entries) != 0 {
		t.Fatalf("another process saw %v before Loki had it; the lag is not in effect", ids(got.Entries))
	}

	f.CatchUp()
	if got := mustQuery(t, other, QueryParams{}); !reflect.DeepEqual(ids(got.Entries), []string{entry["id"].(string)}) {
		t.Fatalf("another process after ingestion: %v", ids(got.Entries))
	}
	h.kit.OK(h.t, "log_storage/query", filter, &q)
	if !reflect.DeepEqual(ids(q.Entries), []string{entry["id"].(string)}) {
		t.Fatalf("own query with the entry in Loki and the buffer: %v", ids(q.Entries))
	}
}

// TestLiveTailSeesOwnWritesWhileLokiLags: a polling live tail gets this
// process's stores through the buffer even though query_range does not
// show them yet.
func TestLiveTailSeesOwnWritesWhileLokiLags(t *testing.T) {
	f := newLoki(t)
	h := serve(t, New(testConfig(t, f.URL(), config.EnvTailMode, "poll", config.EnvTailPollInterval, "50ms")))
	f.HoldIngestion()
	h.send(`"lt"`, "log_storage/tail", map[string]any{"source": "cli", "follow": true})
	if ack, _ := h.response(`"lt"`); ack.Error != nil {
		t.Fatalf("ack %s", ack.Raw)
	}
	h.kit.OK(h.t, "log_storage/store", storeParams(t,
		wireEntryOf("skip", time.Now(), "info", "daemon", "", "d", ""),
		wireEntryOf("mine", time.Now(), "info", "cli", "", "cli.run", "")), nil)
	evs := h.awaitEvents(`"lt"`, 1)
	if got := eventIDs(evs); !reflect.DeepEqual(got, []string{"mine"}) {
		t.Fatalf("events %v", got)
	}
}

// TestBufferWindow: the buffer only answers for recent writes (its TTL; by
// then Loki has them) and only inside the query's window.
func TestBufferWindow(t *testing.T) {
	f := newLoki(t)
	svc := New(testConfig(t, f.URL()))
	t0 := base()
	mustStore(t, svc,
		wireEntryOf("a", t0, "info", "daemon", "", "d", ""),
		wireEntryOf("b", t0.Add(time.Second), "info", "daemon", "", "d", ""))
	f.HideStored()
	got := mustQuery(t, svc, QueryParams{Since: sp(t0.Add(time.Second).Format(time.RFC3339Nano))})
	if !reflect.DeepEqual(ids(got.Entries), []string{"b"}) {
		t.Fatalf("since filter over the buffer: %v", ids(got.Entries))
	}
	svc.buf.mu.Lock()
	svc.buf.items[svc.buf.head].stored = time.Now().Add(-svc.buf.ttl - time.Second) // "a" is old now
	svc.buf.mu.Unlock()
	if got := mustQuery(t, svc, QueryParams{}); !reflect.DeepEqual(ids(got.Entries), []string{"b"}) {
		t.Fatalf("after a's TTL the buffer returned %v", ids(got.Entries))
	}
}

// TestBufferNeverBlocksStores: a live tail that does not keep up loses
// buffer updates (it reads them from Loki instead); it never holds up a
// store.
func TestBufferNeverBlocksStores(t *testing.T) {
	b := newBuffer(100, 1<<20, time.Hour)
	ch, stop := b.subscribe()
	defer stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 1000 {
			b.add([]record{{int64(i), Entry{ID: "x"}}})
		}
	}()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatal("add blocked on a subscriber that does not read")
	}
	if n := len(ch); n != cap(ch) {
		t.Fatalf("subscriber holds %d of %d updates", n, cap(ch))
	}
	stop()
	if subscribers(b) != 0 {
		t.Fatal("unsubscribe left the subscriber")
	}
}
