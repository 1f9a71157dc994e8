// Package faults is a TCP proxy that breaks the network between a client and a server on purpose,
// for tests and soaks: it listens on loopback, forwards every connection to one address, and
// applies the faults set at run time to the bytes in both directions.
//
//	p, err := faults.Listen("127.0.0.1:7233") // the server
//	defer p.Close()
//	// point the client at p.Addr(), then:
//	p.Set(faults.Faults{Latency: 500 * time.Millisecond}) // every byte arrives half a second late
//	p.Set(faults.Faults{Blackhole: true})                 // nothing passes, nothing is refused
//	p.Reset()                                             // open connections end with a TCP reset
//	p.Stall()                                             // open connections go silent for good
//	p.Set(faults.Faults{})                                // healthy again
//
// Faults apply to open connections as well as to new ones. A blackhole holds bytes rather than
// dropping them, as a network partition does while TCP retransmits: when it lifts, what was held
// arrives, late. Reset and Stall lose data.
package faults

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Faults are what a Proxy does to the traffic. The zero value forwards faithfully.
type Faults struct {
	// Latency delays every byte, in each direction, by this much.
	Latency time.Duration
	// BytesPerSecond limits each connection in each direction; 0 is no limit.
	BytesPerSecond int
	// Blackhole accepts connections but lets no byte through either way, on open connections and
	// new ones, until it is cleared.
	Blackhole bool
}

// Proxy forwards connections from its loopback address to a target, applying Faults.
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	faults Faults
	// changed is closed, and replaced, whenever the faults change: it wakes what waits on them.
	changed chan struct{}
	links   map[*link]struct{}
	closed  bool
	wg      sync.WaitGroup
}

// Listen starts a proxy on a free loopback port that forwards to target (host:port).
func Listen(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, changed: make(chan struct{}), links: map[*link]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr returns the proxy's host:port, for the client to dial instead of the target.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Set replaces the faults, for open connections and new ones.
func (p *Proxy) Set(f Faults) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = f
	close(p.changed)
	p.changed = make(chan struct{})
}

// Reset ends every open connection with a TCP reset on both sides, as a middlebox that drops its
// state does, and returns how many it ended. Bytes in flight are lost.
func (p *Proxy) Reset() int {
	p.mu.Lock()
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	p.mu.Unlock()
	for _, l := range links {
		l.abort()
	}
	return len(links)
}

// Stall freezes every open connection for good: no byte passes either way, and neither side
// hears of it, as through a NAT or firewall that forgot the connections and drops their packets.
// Connections made later pass. It returns how many it froze. Only a client's own timeouts and
// keepalives free what waits on a stalled connection.
func (p *Proxy) Stall() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for l := range p.links {
		l.mu.Lock()
		l.stalled = true
		l.mu.Unlock()
	}
	close(p.changed)
	p.changed = make(chan struct{})
	return len(p.links)
}

// Close stops accepting, resets every open connection and waits until all are gone.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.Reset()
	p.wg.Wait()
	return err
}

// state is the faults now, and a channel closed when they change.
func (p *Proxy) state() (Faults, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.faults, p.changed
}

// passable waits until bytes may pass on l (no blackhole stands, l is not stalled), or l ends
// (false).
func (p *Proxy) passable(l *link) bool {
	for {
		f, changed := p.state()
		l.mu.Lock()
		stalled := l.stalled
		l.mu.Unlock()
		if !f.Blackhole && !stalled {
			return true
		}
		select {
		case <-changed:
		case <-l.ctx.Done():
			return false
		}
	}
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		l := &link{client: c.(*net.TCPConn), ctx: ctx, cancel: cancel}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			l.abort()
			continue
		}
		p.links[l] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go p.serve(l)
	}
}

// serve connects one accepted connection to the target, once no blackhole stands, and forwards
// until both directions have ended.
func (p *Proxy) serve(l *link) {
	defer p.wg.Done()
	defer func() {
		p.mu.Lock()
		delete(p.links, l)
		p.mu.Unlock()
		l.close()
	}()
	if !p.passable(l) {
		return
	}
	var d net.Dialer
	dialCtx, cancel := context.WithTimeout(l.ctx, 10*time.Second)
	server, err := d.DialContext(dialCtx, "tcp", p.target)
	cancel()
	if err != nil {
		// The target is down: the client sees its connection end, as it would have been refused.
		return
	}
	if !l.attach(server.(*net.TCPConn)) {
		server.Close()
		return
	}
	var both sync.WaitGroup
	both.Add(2)
	go func() { defer both.Done(); p.pipe(l, l.client, l.server) }()
	go func() { defer both.Done(); p.pipe(l, l.server, l.client) }()
	both.Wait()
}

// chunk is bytes read from one side, and when they may be written to the other.
type chunk struct {
	data []byte
	due  time.Time
}

// pipe forwards one direction: a reader stamps each chunk with its due time (now plus the latency
// at the moment it arrived), a writer holds it until then, through any blackhole, and within the
// bandwidth. The end of src half-closes dst; an error ends the whole link.
func (p *Proxy) pipe(l *link, src, dst *net.TCPConn) {
	chunks := make(chan chunk, 16)
	go func() {
		defer close(chunks)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				f, _ := p.state()
				select {
				case chunks <- chunk{buf[:n], time.Now().Add(f.Latency)}:
				case <-l.ctx.Done():
					return
				}
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					l.abort()
				}
				return
			}
		}
	}()
	limiter := rate.NewLimiter(rate.Inf, 0)
	for c := range chunks {
		if !sleepUntil(l.ctx, c.due) || !p.passable(l) || !p.write(l.ctx, limiter, dst, c.data) {
			l.abort()
			return
		}
	}
	if l.ctx.Err() == nil {
		dst.CloseWrite()
	}
}

// write writes data to dst within the bandwidth of the faults, in slices of at most a tenth of a
// second's worth when it is limited.
func (p *Proxy) write(ctx context.Context, limiter *rate.Limiter, dst *net.TCPConn, data []byte) bool {
	for len(data) > 0 {
		f, _ := p.state()
		n := len(data)
		if f.BytesPerSecond > 0 {
			burst := max(1, f.BytesPerSecond/10)
			if limiter.Limit() != rate.Limit(f.BytesPerSecond) || limiter.Burst() != burst {
				limiter.SetLimit(rate.Limit(f.BytesPerSecond))
				limiter.SetBurst(burst)
			}
			n = min(n, burst)
			if limiter.WaitN(ctx, n) != nil {
				return false
			}
		}
		if _, err := dst.Write(data[:n]); err != nil {
			return false
		}
		data = data[n:]
	}
	return true
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// link is one client connection and, once dialled, its connection to the target.
type link struct {
	client *net.TCPConn
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	server  *net.TCPConn
	stalled bool
	ended   bool
}

// attach records the connection to the target; false when the link was ended meanwhile.
func (l *link) attach(server *net.TCPConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return false
	}
	l.server = server
	return true
}

// abort ends both connections with a reset (a linger of zero).
func (l *link) abort() { l.end(true) }

// close ends both connections as the ends of a finished exchange: what was written is delivered.
func (l *link) close() { l.end(false) }

func (l *link) end(reset bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	l.ended = true
	l.cancel()
	for _, c := range []*net.TCPConn{l.client, l.server} {
		if c == nil {
			continue
		}
		if reset {
			c.SetLinger(0)
		}
		c.Close()
	}
}
