package faults_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/taskgate/taskgate/test/faults"
)

// echoServer echoes every connection until its client half-closes, and counts connections.
func echoServer(t *testing.T) (addr string, accepted *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted = &atomic.Int64{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String(), accepted
}

func listen(t *testing.T, target string) *faults.Proxy {
	t.Helper()
	p, err := faults.Listen(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func dial(t *testing.T, p *faults.Proxy) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

// roundTrip writes msg and reads as many bytes back within a generous deadline.
func roundTrip(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("reading the echo of %q: %v", msg, err)
	}
	if string(got) != msg {
		t.Fatalf("echo %q, want %q", got, msg)
	}
}

func TestForwardsBothWaysAndHalfCloses(t *testing.T) {
	target, _ := echoServer(t)
	p := listen(t, target)
	c := dial(t, p)
	roundTrip(t, c, "hello")
	big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB: many chunks
	go func() {
		c.Write(big)
		c.CloseWrite()
	}()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("reading the echo up to the server's close: %v", err)
	}
	if !bytes.Equal(got, big) {
		t.Fatalf("echoed %d bytes, want the %d sent", len(got), len(big))
	}
}

func TestLatencyDelaysEachDirection(t *testing.T) {
	target, _ := echoServer(t)
	p := listen(t, target)
	c := dial(t, p)
	roundTrip(t, c, "warm")
	const latency = 200 * time.Millisecond
	p.Set(faults.Faults{Latency: latency})
	begin := time.Now()
	roundTrip(t, c, "late")
	if d := time.Since(begin); d < 2*latency {
		t.Errorf("a round trip took %v with %v of latency each way, want at least %v", d, latency, 2*latency)
	}
	p.Set(faults.Faults{})
	roundTrip(t, c, "again")
}

func TestBandwidthLimitsThroughput(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	received := make(chan time.Duration, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		begin := time.Now()
		io.Copy(io.Discard, c)
		received <- time.Since(begin)
	}()
	p := listen(t, ln.Addr().String())
	const rate, size = 16 << 10, 24 << 10
	p.Set(faults.Faults{BytesPerSecond: rate})
	c := dial(t, p)
	if _, err := c.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	c.CloseWrite()
	// size/rate is 1.5 s; the first tenth of a second's worth passes at once.
	want := time.Duration(size-rate/10) * time.Second / rate
	select {
	case d := <-received:
		if d < want {
			t.Errorf("%d bytes at %d bytes per second arrived in %v, want at least %v", size, rate, d, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the bytes did not arrive within 20 s")
	}
}

func TestResetEndsOpenConnectionsWithAReset(t *testing.T) {
	target, _ := echoServer(t)
	p := listen(t, target)
	c := dial(t, p)
	roundTrip(t, c, "before")
	if n := p.Reset(); n != 1 {
		t.Errorf("Reset ended %d connections, want 1", n)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := c.Read(make([]byte, 1))
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("reading a connection that was reset: %v, want ECONNRESET", err)
	}
	// New connections pass as before.
	roundTrip(t, dial(t, p), "after")
}

func TestBlackholeHoldsEveryByteUntilLifted(t *testing.T) {
	target, accepted := echoServer(t)
	p := listen(t, target)
	open := dial(t, p)
	roundTrip(t, open, "before")
	p.Set(faults.Faults{Blackhole: true})

	fresh := dial(t, p) // accepted by the proxy, as a partitioned network's SYN may still be answered
	for _, c := range []*net.TCPConn{open, fresh} {
		if _, err := c.Write([]byte("held")); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		if n, err := c.Read(make([]byte, 4)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("read through a blackhole: %d bytes, error %v; want nothing until the deadline", n, err)
		}
	}
	if n := accepted.Load(); n != 1 {
		t.Errorf("the server saw %d connections during the blackhole, want only the 1 from before", n)
	}

	p.Set(faults.Faults{})
	for _, c := range []*net.TCPConn{open, fresh} {
		got := make([]byte, 4)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(c, got); err != nil || string(got) != "held" {
			t.Errorf("after the blackhole: %q, %v; want the held bytes echoed", got, err)
		}
	}
}

func TestStallSilencesOpenConnectionsForGood(t *testing.T) {
	target, _ := echoServer(t)
	p := listen(t, target)
	open := dial(t, p)
	roundTrip(t, open, "before")
	if n := p.Stall(); n != 1 {
		t.Errorf("Stall froze %d connections, want 1", n)
	}
	if _, err := open.Write([]byte("lost")); err != nil {
		t.Fatal(err)
	}
	open.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	if n, err := open.Read(make([]byte, 4)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read on a stalled connection: %d bytes, error %v; want nothing, and no error from the proxy", n, err)
	}
	// Connections made after the stall pass, and the stalled one stays silent.
	roundTrip(t, dial(t, p), "after")
	open.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := open.Read(make([]byte, 4)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read on a stalled connection later: %d bytes, error %v; want nothing", n, err)
	}
}

func TestTargetDownEndsTheConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close()
	p := listen(t, down)
	c := dial(t, p)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("reading through a proxy whose target is down: %v, want the connection ended", err)
	}
}

func TestCloseEndsOpenConnections(t *testing.T) {
	target, _ := echoServer(t)
	p, err := faults.Listen(target)
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, p)
	roundTrip(t, c, "x")
	p.Set(faults.Faults{Blackhole: true}) // Close must not wait for the blackhole
	done := make(chan error, 1)
	go func() { done <- p.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return within 10 s")
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("reading after Close: %v, want the connection ended", err)
	}
	if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		t.Error("the proxy still accepts connections after Close")
	}
}
