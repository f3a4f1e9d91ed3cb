package queue

import (
	"strconv"
	"strings"

	"github.com/animus-plugins/animus-plugins/pkg/queuekit/wire"
)

// listPaging is the queue/list paging rule the host expects.
type listPaging int

const (
	// paging032: no default limit, limit 0 → [] (queue 0.3.x, Animus 0.6).
	paging032 listPaging = iota
	// paging040: default 500, clamped to 1..2000 (queue 0.4.0, Animus
	// 0.7, whose CLI reads one page).
	paging040
)

const (
	defaultListLimit040 = 500
	maxListLimit040     = 2000
)

// pagingFor picks the paging rule from the handshake (queue-v2.md §6.1,
// §6.7). protocol_version cannot tell the 0.6 and 0.7 queue clients apart
// (both send 1.1.0), host_info.version can: 0.7.0 and its pre-releases,
// or any plugin protocol ≥ 1.2.0, get the 0.4.0 rule. Nothing is refused:
// one binary serves both daemon lines.
func pagingFor(protocol, hostVersion string) listPaging {
	if atLeast(protocol, 1, 2) || atLeast(hostVersion, 0, 7) {
		return paging040
	}
	return paging032
}

// atLeast reports whether a semver's major.minor is at least the given
// one; pre-release tags are ignored, so 0.7.0-rc.52 counts as 0.7. An
// unparseable version is not at least anything.
func atLeast(v string, major, minor int) bool {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(strings.SplitN(parts[1], "-", 2)[0])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || (ma == major && mi >= minor)
}

// apply turns a list request into the limit the store reads (nil = all).
func (p listPaging) apply(req *wire.ListRequest) *uint64 {
	if p != paging040 {
		return req.Limit
	}
	n := uint64(defaultListLimit040)
	if req.Limit != nil {
		n = min(max(*req.Limit, 1), maxListLimit040)
	}
	return &n
}
