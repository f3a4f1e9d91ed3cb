package logstore

import (
	"context"
	"encoding/json"
	"errors"
	"time"
	"unsafe"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/loki"
)

// StoreParams are log_storage/store's params.
type StoreParams struct {
	Entries *[]json.RawMessage `json:"entries"`
}

// Validate requires entries.
func (p StoreParams) Validate() error {
	if p.Entries == nil {
		return pluginkit.InvalidParams(`invalid params: field "entries" is required: an array of LogEntry`).WithData("field", "entries")
	}
	return nil
}

// StoreResult is {stored: n}.
type StoreResult struct {
	Stored int `json:"stored"`
}

// pending is one entry ready to push.
type pending struct {
	rec        record
	line       string
	start, end int // the line's place in the batch's buffer, until line is set
	truncated  bool
}

// store validates every entry first (a bad one fails the call before
// anything is sent), groups the entries by label set into one push and
// sends it synchronously with bounded retries. A retry resends identical
// bytes, and Loki drops an exact duplicate (same stream, timestamp and
// line), so retries never duplicate.
func (s *Service) store(ctx context.Context, p StoreParams) (StoreResult, error) {
	c, err := s.ready()
	if err != nil {
		return StoreResult{}, err
	}
	raws := *p.Entries
	batch := make([]pending, 0, len(raws))
	// Lines are rendered into one buffer and turned into one string.
	size := 0
	for _, raw := range raws {
		size += len(raw) + 16
	}
	lines := make([]byte, 0, size)
	for i, raw := range raws {
		rec, ok := fastEntry(raw)
		if !ok {
			var err error
			if rec, err = parseEntry(raw); err != nil {
				return StoreResult{}, pluginkit.InvalidParams("invalid params: entries[%d]: %s", i, err.Error()).WithData("index", i)
			}
		}
		start := len(lines)
		if lines = appendLine(lines, rec.Entry); len(lines)-start <= maxLine {
			batch = append(batch, pending{rec: rec, start: start, end: len(lines)})
			continue
		}
		lines = lines[:start]
		line, truncated, err := encodeLine(rec.Entry, maxLine)
		if err != nil {
			return StoreResult{}, pluginkit.InvalidParams("invalid params: entries[%d]: %s", i, err.Error()).WithData("index", i)
		}
		if truncated { // what was stored is what a query returns
			var e Entry
			_ = json.Unmarshal([]byte(line), &e)
			rec.Entry = e
			s.log.Warn("entry truncated to fit Loki's line limit", "id", rec.Entry.ID, "limit_bytes", maxLine)
		}
		batch = append(batch, pending{rec: rec, line: line, truncated: truncated})
	}
	// lines is never written again: its bytes become the lines' one
	// string without a copy (a 500-entry store's largest allocation was
	// that copy).
	all := unsafe.String(unsafe.SliceData(lines), len(lines))
	for i := range batch {
		if b := &batch[i]; b.line == "" {
			b.line = all[b.start:b.end]
		}
	}
	if len(batch) == 0 {
		return StoreResult{Stored: 0}, nil
	}
	if err := s.push(ctx, c, batch); err != nil {
		return StoreResult{}, err
	}
	recs := make([]record, len(batch))
	for i, b := range batch {
		recs[i] = b.rec
	}
	s.buf.add(recs)
	return StoreResult{Stored: len(batch)}, nil
}

// push sends the batch inside storeBudget: 5xx, timeouts and connection
// errors are retried with a short backoff; 429, 4xx and the end of the
// budget are final. In LOKI_STRUCTURED_METADATA=auto, a refusal of
// structured metadata switches the process to parser mode and resends
// without it.
func (s *Service) push(ctx context.Context, c *loki.Client, batch []pending) error {
	ctx, cancel := context.WithTimeout(ctx, storeBudget)
	defer cancel()
	backoff := 100 * time.Millisecond
	var err error
	for attempt := 1; ; attempt++ {
		err = c.Push(ctx, s.streams(batch))
		if err == nil {
			s.pushSucceeded()
			return nil
		}
		if smRejected(err) && s.cfg.StructuredMetadata == config.SMAuto && !s.parser.Load() {
			s.parser.Store(true)
			s.log.Warn("Loki refused structured metadata; storing without it and filtering with | json from now on")
			attempt--
			continue
		}
		if !retryable(err) || ctx.Err() != nil {
			break
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < backoff+50*time.Millisecond {
			break
		}
		s.log.Info("push failed; retrying", "attempt", attempt, "error", err)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
		}
		backoff *= 2
	}
	if ctx.Err() != nil && !errors.Is(err, context.Canceled) {
		err = context.DeadlineExceeded
	}
	rerr := rpcError("store", err)
	var pe *pluginkit.Error
	if errors.As(rerr, &pe) && pe.Category != pluginkit.CategoryInvalidRequest {
		s.pushFailed(pe.Message)
	}
	return rerr
}

// streams groups the batch by label set: service_name, source, level and
// the static extra labels. id, target and source_name go to structured
// metadata unless the process is in parser mode.
func (s *Service) streams(batch []pending) []loki.Stream {
	withSM := !s.parser.Load()
	var out []loki.Stream
	index := map[[2]string]int{}
	for _, b := range batch {
		key := [2]string{b.rec.Entry.Source, b.rec.Entry.Level}
		i, ok := index[key]
		if !ok {
			ls := []loki.Label{{Name: "service_name", Value: s.cfg.ServiceName}, {Name: "source", Value: key[0]}, {Name: "level", Value: key[1]}}
			for _, l := range s.cfg.ExtraLabels {
				ls = append(ls, loki.Label{Name: l.Name, Value: l.Value})
			}
			loki.SortLabels(ls)
			i = len(out)
			index[key] = i
			out = append(out, loki.Stream{Labels: ls})
		}
		e := loki.Entry{TS: b.rec.NS, Line: b.line}
		if withSM {
			e.SM = []loki.Label{{Name: "animus_id", Value: b.rec.Entry.ID}, {Name: "target", Value: b.rec.Entry.Target}}
			if sn := b.rec.sourceName(); sn != "" {
				e.SM = append(e.SM, loki.Label{Name: "source_name", Value: sn})
			}
		}
		out[i].Entries = append(out[i].Entries, e)
	}
	return out
}
