package pgproxy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
)

// Startup packet codes (the second int32 of an untyped packet).
const (
	cancelRequestCode = 80877102
	sslRequestCode    = 80877103
	gssEncRequestCode = 80877104
)

// maxMessage bounds one message, so a desynchronised stream fails fast
// instead of allocating gigabytes.
const maxMessage = 256 << 20

// message is one typed protocol message; raw is all of it, as forwarded.
type message struct {
	typ  byte
	body []byte
	raw  []byte
}

// readStartup reads an untyped packet: int32 length (itself included),
// then the rest.
func readStartup(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n < 8 || n > 10000 { // PostgreSQL's own limit for startup packets
		return nil, fmt.Errorf("pgproxy: bad startup packet length %d", n)
	}
	pkt := make([]byte, n)
	copy(pkt, hdr[:])
	if _, err := io.ReadFull(r, pkt[4:]); err != nil {
		return nil, err
	}
	return pkt, nil
}

func startupCode(pkt []byte) uint32 { return binary.BigEndian.Uint32(pkt[4:8]) }

// readMessage reads a type byte, an int32 length (itself included, not
// the type byte) and the body.
func readMessage(r io.Reader) (message, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return message{}, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n < 4 || n > maxMessage {
		return message{}, fmt.Errorf("pgproxy: bad length %d for message %q", n, hdr[0])
	}
	raw := make([]byte, 1+n)
	copy(raw, hdr[:])
	if _, err := io.ReadFull(r, raw[5:]); err != nil {
		return message{}, err
	}
	return message{typ: hdr[0], body: raw[5:], raw: raw}, nil
}

// cstring returns the NUL-terminated string at b[off:].
func cstring(b []byte, off int) string {
	if off >= len(b) {
		return ""
	}
	b = b[off:]
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return string(b[:i])
	}
	return string(b)
}

// parseParse returns a Parse message's statement name and SQL text.
func parseParse(body []byte) (name, sql string) {
	name = cstring(body, 0)
	return name, cstring(body, len(name)+1)
}

// parseBind returns a Bind message's portal and statement names.
func parseBind(body []byte) (portal, stmt string) {
	portal = cstring(body, 0)
	return portal, cstring(body, len(portal)+1)
}

// isCommit: the SQL is COMMIT (or COMMIT WORK / COMMIT TRANSACTION), in
// any case, with surrounding space and an optional trailing semicolon.
func isCommit(sql string) bool {
	s := strings.TrimSpace(sql)
	s = strings.TrimSpace(strings.TrimSuffix(s, ";"))
	f := strings.Fields(strings.ToUpper(s))
	if len(f) == 0 || f[0] != "COMMIT" {
		return false
	}
	return len(f) == 1 || (len(f) == 2 && (f[1] == "WORK" || f[1] == "TRANSACTION"))
}

// Target returns the host:port a DSN points at (URL or key=value; the
// first host if several; port 5432 by default).
func Target(dsn string) (string, error) {
	s := strings.TrimSpace(dsn)
	host, port := "", ""
	if strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") {
		u, err := url.Parse(s)
		if err != nil {
			return "", errors.New("pgproxy: unparsable DSN URL") // never quote it: it may hold a password
		}
		hp := strings.Split(u.Host, ",")[0]
		if h, p, err := net.SplitHostPort(hp); err == nil {
			host, port = h, p
		} else {
			host = hp
		}
	} else {
		for _, f := range strings.Fields(s) {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "host":
				host = strings.Split(v, ",")[0]
			case "port":
				port = strings.Split(v, ",")[0]
			}
		}
	}
	if host == "" || strings.HasPrefix(host, "/") {
		return "", errors.New("pgproxy: the DSN names no TCP host")
	}
	if port == "" {
		port = "5432"
	}
	return net.JoinHostPort(host, port), nil
}

// rewriteDSN points a DSN at host:port. The key=value form is split on
// spaces, so values holding quoted spaces other than host and port may
// not survive; test DSNs have none.
func rewriteDSN(base, host, port string) string {
	s := strings.TrimSpace(base)
	if strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") {
		u, err := url.Parse(s)
		if err != nil {
			return s
		}
		u.Host = net.JoinHostPort(host, port)
		return u.String()
	}
	var out []string
	for _, f := range strings.Fields(s) {
		k, _, _ := strings.Cut(f, "=")
		if k != "host" && k != "hostaddr" && k != "port" {
			out = append(out, f)
		}
	}
	return strings.Join(append(out, "host="+host, "port="+port), " ")
}
