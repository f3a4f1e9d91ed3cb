package pgproxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// commitReplyTimeout bounds how long an armed cut waits for the server's
// ReadyForQuery after the COMMIT before closing the client anyway.
const commitReplyTimeout = 10 * time.Second

// Proxy forwards 127.0.0.1:<random> to one PostgreSQL server.
type Proxy struct {
	target string
	ln     net.Listener

	mu     sync.Mutex
	pairs  map[*pair]struct{}
	refuse bool
	armed  bool
	cuts   int
	closed bool
	wg     sync.WaitGroup
}

// Start listens on 127.0.0.1:0 and forwards each connection to target
// (host:port).
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: target, ln: ln, pairs: map[*pair]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// CutAll closes every current connection, both ways, as a network failure
// or a server crash would. New connections are still accepted.
func (p *Proxy) CutAll() {
	p.mu.Lock()
	pairs := make([]*pair, 0, len(p.pairs))
	for c := range p.pairs {
		pairs = append(pairs, c)
	}
	p.mu.Unlock()
	for _, c := range pairs {
		c.close()
	}
}

// Refuse makes new connections be closed as soon as they are accepted
// (before any byte reaches the server), until Refuse(false). Existing
// connections are left alone; combine with CutAll for "network down".
func (p *Proxy) Refuse(on bool) {
	p.mu.Lock()
	p.refuse = on
	p.mu.Unlock()
}

// ArmCommitCut arms a one-shot fault: the next COMMIT any client sends
// (a simple Query, or an Execute of a statement Parsed as COMMIT) is
// forwarded, the server's whole reply up to ReadyForQuery is read and
// discarded, and that client's connection is then closed. The server
// committed; the client cannot know.
func (p *Proxy) ArmCommitCut() {
	p.mu.Lock()
	p.armed = true
	p.mu.Unlock()
}

// CommitCuts counts the armed cuts that fired.
func (p *Proxy) CommitCuts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cuts
}

// Close stops listening, cuts every connection and waits for the proxy's
// goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.CutAll()
	p.wg.Wait()
	return err
}

// fireCommitCut consumes the armed fault, reporting whether this COMMIT
// is the one to cut.
func (p *Proxy) fireCommitCut() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.armed {
		return false
	}
	p.armed = false
	p.cuts++
	return true
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // e.g. EMFILE; do not spin
			continue
		}
		p.mu.Lock()
		if p.refuse || p.closed {
			p.mu.Unlock()
			c.Close()
			continue
		}
		pr := &pair{p: p, client: c}
		p.pairs[pr] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go func() {
			defer p.wg.Done()
			pr.run()
			pr.close()
			p.mu.Lock()
			delete(p.pairs, pr)
			p.mu.Unlock()
		}()
	}
}

// pair is one client connection and its server connection.
type pair struct {
	p      *Proxy
	client net.Conn

	mu     sync.Mutex
	server net.Conn
	closed bool

	// swallow: set before a cut COMMIT is forwarded; the server→client
	// side then discards replies until ReadyForQuery and closes the client.
	swallowMu sync.Mutex
	swallow   bool
}

func (c *pair) close() {
	c.mu.Lock()
	c.closed = true
	s := c.server
	c.mu.Unlock()
	c.client.Close()
	if s != nil {
		s.Close()
	}
}

func (c *pair) run() {
	d := net.Dialer{Timeout: 5 * time.Second}
	s, err := d.Dial("tcp", c.p.target)
	if err != nil {
		return
	}
	c.mu.Lock()
	c.server = s
	closed := c.closed
	c.mu.Unlock()
	if closed {
		s.Close()
		return
	}
	tls, err := c.startup(s)
	if err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if tls {
			_, _ = io.Copy(c.client, s)
		} else {
			c.serverToClient(s)
		}
		c.close()
	}()
	if tls {
		_, _ = io.Copy(s, c.client)
	} else {
		c.clientToServer(s)
	}
	c.close()
	<-done
}

// startup relays the untyped startup packets. An SSLRequest or
// GSSENCRequest gets a one-byte answer: 'N' (the usual, with
// sslmode=disable never asked) continues in plain text with the next
// startup packet; anything else means encryption, which the proxy can
// only relay blindly (tls=true).
func (c *pair) startup(s net.Conn) (tls bool, err error) {
	for {
		pkt, err := readStartup(c.client)
		if err != nil {
			return false, err
		}
		if _, err := s.Write(pkt); err != nil {
			return false, err
		}
		switch code := startupCode(pkt); code {
		case sslRequestCode, gssEncRequestCode:
			var b [1]byte
			if _, err := io.ReadFull(s, b[:]); err != nil {
				return false, err
			}
			if _, err := c.client.Write(b[:]); err != nil {
				return false, err
			}
			if b[0] != 'N' {
				return true, nil
			}
		case cancelRequestCode:
			return true, nil // no protocol follows; just relay until closed
		default:
			return false, nil
		}
	}
}

func (c *pair) clientToServer(s net.Conn) {
	stmts := map[string]bool{}   // prepared statement name → is COMMIT
	portals := map[string]bool{} // portal name → is COMMIT
	for {
		m, err := readMessage(c.client)
		if err != nil {
			return
		}
		commit := false
		switch m.typ {
		case 'Q':
			commit = isCommit(cstring(m.body, 0))
		case 'P':
			name, sql := parseParse(m.body)
			stmts[name] = isCommit(sql)
		case 'B':
			portal, stmt := parseBind(m.body)
			portals[portal] = stmts[stmt]
		case 'E':
			commit = portals[cstring(m.body, 0)]
		case 'C': // Close statement/portal
			if len(m.body) > 1 {
				if m.body[0] == 'S' {
					delete(stmts, cstring(m.body, 1))
				} else {
					delete(portals, cstring(m.body, 1))
				}
			}
		}
		if commit && c.p.fireCommitCut() {
			c.swallowMu.Lock()
			c.swallow = true
			c.swallowMu.Unlock()
			// If the server never answers, the client is cut anyway.
			t := time.AfterFunc(commitReplyTimeout, c.close)
			defer t.Stop()
		}
		if _, err := s.Write(m.raw); err != nil {
			return
		}
	}
}

func (c *pair) serverToClient(s net.Conn) {
	for {
		m, err := readMessage(s)
		if err != nil {
			return
		}
		c.swallowMu.Lock()
		swallow := c.swallow
		c.swallowMu.Unlock()
		if swallow {
			if m.typ == 'Z' {
				return // run's caller closes both connections
			}
			continue
		}
		if _, err := c.client.Write(m.raw); err != nil {
			return
		}
	}
}

// DSN rewrites base (a postgres:// URL or libpq key=value string) to go
// through the proxy.
func (p *Proxy) DSN(base string) string {
	host, port, _ := net.SplitHostPort(p.Addr())
	return rewriteDSN(base, host, port)
}

func (p *Proxy) String() string { return fmt.Sprintf("pgproxy %s → %s", p.Addr(), p.target) }
