package fakeloki

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// labelNameRE is Loki's (Prometheus's legacy) label name rule.
var labelNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// Entry is one stored log line.
type Entry struct {
	TS   time.Time
	Line string
	// SM is the entry's structured metadata (nil when none).
	SM map[string]string
	// seq orders entries that share a timestamp by arrival.
	seq uint64
	// visible is when query_range starts returning the entry (arrival
	// plus the ingestion lag set with SetIngestionLag).
	visible time.Time
}

// stream is one label set of one tenant.
type stream struct {
	labels  map[string]string
	key     string
	entries []Entry // sorted by (TS, seq)
	newest  time.Time
}

// tenant holds the streams of one X-Scope-OrgID.
type tenant struct {
	streams map[string]*stream
	count   int
}

// pushedEntry is an accepted entry handed to tail subscribers.
type pushedEntry struct {
	st *stream
	e  Entry
}

// subscriber receives the entries accepted for one tenant.
type subscriber struct {
	tenant  string
	ch      chan []pushedEntry
	dropped []pushedEntry // batches that did not fit in ch
	mu      sync.Mutex
}

// store is the in-memory log store shared by all handlers.
type store struct {
	mu      sync.Mutex
	tenants map[string]*tenant
	subs    map[*subscriber]struct{}
	seq     uint64
}

func newStore() *store {
	return &store{tenants: map[string]*tenant{}, subs: map[*subscriber]struct{}{}}
}

// labelsKey renders a label set in Loki's canonical `{a="b", c="d"}` form
// with sorted names; it identifies a stream.
func labelsKey(ls map[string]string) string {
	names := make([]string, 0, len(ls))
	for n := range ls {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%q", n, ls[n])
	}
	b.WriteByte('}')
	return b.String()
}

// validateLabels applies Loki's per-stream label rules and returns a
// Loki-worded error message, or "".
func (s *Server) validateLabels(ls map[string]string) string {
	key := labelsKey(ls)
	if len(ls) == 0 {
		return "error at least one label pair is required per stream"
	}
	if len(ls) > s.opts.MaxLabelNames {
		return fmt.Sprintf("entry for stream '%s' has %d label names; limit %d", key, len(ls), s.opts.MaxLabelNames)
	}
	names := make([]string, 0, len(ls))
	for n := range ls {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v := ls[n]
		if !labelNameRE.MatchString(n) {
			return fmt.Sprintf("error parsing labels '%s' with error: invalid label name '%s'", key, n)
		}
		if len(n) > s.opts.MaxLabelNameLength {
			return fmt.Sprintf("stream '%s' has label name too long: '%s'", key, n)
		}
		if len(v) > s.opts.MaxLabelValueLength {
			return fmt.Sprintf("stream '%s' has label value too long: '%s'", key, v)
		}
	}
	return ""
}

// append stores entries of one stream for one tenant. It returns the
// number accepted (duplicates count as accepted, as in Loki, but are not
// stored twice) and one Loki-worded message per rejected entry.
func (s *Server) append(tenantID string, ls map[string]string, entries []Entry) (accepted int, errs []string) {
	if msg := s.validateLabels(ls); msg != "" {
		return 0, repeat(msg, len(entries))
	}
	if !s.opts.DisableServiceNameDiscovery {
		if _, ok := ls["service_name"]; !ok {
			ls = cloneLabels(ls)
			ls["service_name"] = discoverServiceName(ls)
		}
	}
	key := labelsKey(ls)
	now := s.opts.Now()
	visible := s.visibleFrom(time.Now())
	st := s.store
	st.mu.Lock()
	t := st.tenants[tenantID]
	if t == nil {
		t = &tenant{streams: map[string]*stream{}}
		st.tenants[tenantID] = t
	}
	str := t.streams[key]
	if str == nil {
		str = &stream{labels: cloneLabels(ls), key: key}
	}
	var fresh []pushedEntry
	for _, e := range entries {
		if msg := s.checkEntry(str, key, e, now); msg != "" {
			errs = append(errs, msg)
			continue
		}
		accepted++
		if str.has(e) {
			continue // exact duplicate: silently dropped
		}
		st.seq++
		e.seq = st.seq
		e.visible = visible
		str.insert(e)
		t.count++
		fresh = append(fresh, pushedEntry{st: str, e: e})
	}
	if len(str.entries) > 0 {
		t.streams[key] = str
	}
	st.publish(tenantID, fresh, s.takeTailDrops)
	st.mu.Unlock()
	return accepted, errs
}

// checkEntry applies the per-entry limits (line size, age, order).
func (s *Server) checkEntry(str *stream, key string, e Entry, now time.Time) string {
	o := s.opts
	if o.MaxLineSize > 0 && len(e.Line) > o.MaxLineSize {
		return fmt.Sprintf("max entry size '%d' bytes exceeded for stream '%s' while adding an entry with length '%d' bytes", o.MaxLineSize, key, len(e.Line))
	}
	if o.DisallowStructuredMetadata && len(e.SM) > 0 {
		return fmt.Sprintf("stream '%s' includes structured metadata, but this feature is disallowed. Please see `limits_config.allow_structured_metadata` or contact your Loki administrator to enable it.", key)
	}
	if o.RejectOldSamplesMaxAge > 0 && e.TS.Before(now.Add(-o.RejectOldSamplesMaxAge)) {
		return fmt.Sprintf("entry for stream '%s' has timestamp too old: %s, oldest acceptable timestamp is: %s", key, e.TS.UTC().Format(time.RFC3339), now.Add(-o.RejectOldSamplesMaxAge).UTC().Format(time.RFC3339))
	}
	if o.CreationGracePeriod > 0 && e.TS.After(now.Add(o.CreationGracePeriod)) {
		return fmt.Sprintf("entry for stream '%s' has timestamp too new: %s", key, e.TS.UTC().Format(time.RFC3339))
	}
	if len(str.entries) == 0 || str.has(e) {
		return ""
	}
	if o.OrderedWrites && e.TS.Before(str.newest) {
		return fmt.Sprintf("entry out of order for stream '%s': entry timestamp is %s, newest is %s", key, e.TS.UTC().Format(time.RFC3339Nano), str.newest.UTC().Format(time.RFC3339Nano))
	}
	if !o.OrderedWrites && o.OutOfOrderWindow > 0 {
		cutoff := str.newest.Add(-o.OutOfOrderWindow)
		if e.TS.Before(cutoff) {
			return fmt.Sprintf("entry too far behind, entry timestamp is: %s, oldest acceptable timestamp is: %s", e.TS.UTC().Format(time.RFC3339), cutoff.UTC().Format(time.RFC3339))
		}
	}
	return ""
}

// has reports an exact duplicate: same timestamp and same line.
func (str *stream) has(e Entry) bool {
	i := sort.Search(len(str.entries), func(i int) bool { return !str.entries[i].TS.Before(e.TS) })
	for ; i < len(str.entries) && str.entries[i].TS.Equal(e.TS); i++ {
		if str.entries[i].Line == e.Line {
			return true
		}
	}
	return false
}

func (str *stream) insert(e Entry) {
	i := sort.Search(len(str.entries), func(i int) bool { return str.entries[i].TS.After(e.TS) })
	str.entries = append(str.entries, Entry{})
	copy(str.entries[i+1:], str.entries[i:])
	str.entries[i] = e
	if e.TS.After(str.newest) {
		str.newest = e.TS
	}
}

// snapshot returns the tenant's streams, for reading outside the lock
// (entries slices are copied).
func (st *store) snapshot(tenantID string) []*stream {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.snapshotLocked(tenantID)
}

func (st *store) snapshotLocked(tenantID string) []*stream {
	t := st.tenants[tenantID]
	if t == nil {
		return nil
	}
	out := make([]*stream, 0, len(t.streams))
	for _, s := range t.streams {
		out = append(out, &stream{labels: s.labels, key: s.key, entries: append([]Entry(nil), s.entries...)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// subscribe registers a tail subscriber and returns the tenant's current
// streams atomically with the registration, so no entry is missed or seen
// twice.
func (st *store) subscribe(tenantID string) (*subscriber, []*stream) {
	st.mu.Lock()
	defer st.mu.Unlock()
	sub := &subscriber{tenant: tenantID, ch: make(chan []pushedEntry, 64)}
	st.subs[sub] = struct{}{}
	return sub, st.snapshotLocked(tenantID)
}

func (st *store) unsubscribe(sub *subscriber) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.subs, sub)
}

// publish hands newly accepted entries to the tenant's tails (st.mu is
// held). The first drops(n) of them, if any, are lost instead, as for a
// tail that fell behind (DropTailEntries); drops is asked only when a
// tail is open, so entries nobody tails do not use up the count.
func (st *store) publish(tenantID string, fresh []pushedEntry, drops func(int) int) {
	var subs []*subscriber
	for sub := range st.subs {
		if sub.tenant == tenantID {
			subs = append(subs, sub)
		}
	}
	if len(fresh) == 0 || len(subs) == 0 {
		return
	}
	n := drops(len(fresh))
	for _, sub := range subs {
		if n > 0 {
			sub.lose(fresh[:n])
		}
		if n < len(fresh) {
			sub.deliver(fresh[n:])
		}
	}
}

// lose records a batch as dropped and wakes the tail (with an empty batch)
// so it reports the loss without waiting for the next push.
func (sub *subscriber) lose(batch []pushedEntry) {
	sub.mu.Lock()
	sub.dropped = append(sub.dropped, batch...)
	sub.mu.Unlock()
	select {
	case sub.ch <- nil:
	default:
	}
}

// deliver hands a batch to the subscriber without blocking the push; a
// batch that does not fit is remembered as dropped.
func (sub *subscriber) deliver(batch []pushedEntry) {
	select {
	case sub.ch <- batch:
	default:
		sub.mu.Lock()
		sub.dropped = append(sub.dropped, batch...)
		sub.mu.Unlock()
	}
}

func (sub *subscriber) takeDropped() []pushedEntry {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	d := sub.dropped
	sub.dropped = nil
	return d
}

// discoverServiceName follows Loki 3's default discover_service_name list.
func discoverServiceName(ls map[string]string) string {
	for _, n := range []string{"service", "app", "application", "name", "app_kubernetes_io_name",
		"container", "container_name", "k8s_container_name", "component", "workload", "job", "k8s_job_name"} {
		if v := ls[n]; v != "" {
			return v
		}
	}
	return "unknown_service"
}

func cloneLabels(ls map[string]string) map[string]string {
	out := make(map[string]string, len(ls)+1)
	for k, v := range ls {
		out[k] = v
	}
	return out
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
