package main

import (
	"bufio"
	"net"
	"net/url"
	"os"
	"testing"
	"time"
)

// TestAtDistance: the engines' variables, host:port or URL, name proxies that delay each way, served
// by a process other than the bench's, which ends with stop.
func TestAtDistance(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				c.Write([]byte(line))
			}()
		}
	}()
	for _, name := range engineVars {
		t.Setenv(name, "")
	}
	t.Setenv("TEMPORAL_ADDRESS", ln.Addr().String())
	t.Setenv("SFN_ENDPOINT", "http://"+ln.Addr().String()+"/path")
	const latency = 40 * time.Millisecond
	stop, err := atDistance(latency)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	if v := os.Getenv("RESTATE_INGRESS_URL"); v != "" {
		t.Errorf("RESTATE_INGRESS_URL was unset, is now %q", v)
	}
	u, err := url.Parse(os.Getenv("SFN_ENDPOINT"))
	if err != nil || u.Scheme != "http" || u.Path != "/path" {
		t.Fatalf("SFN_ENDPOINT = %q: want the same URL on another host", os.Getenv("SFN_ENDPOINT"))
	}
	for _, addr := range []string{os.Getenv("TEMPORAL_ADDRESS"), u.Host} {
		if addr == ln.Addr().String() {
			t.Fatalf("%s is still the engine's own address", addr)
		}
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if pid := listener(addr); pid == 0 || pid == os.Getpid() {
			t.Errorf("%s is served by process %d: want a process of its own (the bench is %d)", addr, pid, os.Getpid())
		}
		start := time.Now()
		c.Write([]byte("ping\n"))
		line, err := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if err != nil || line != "ping\n" {
			t.Fatalf("through %s: %q, %v", addr, line, err)
		}
		if rtt := time.Since(start); rtt < 2*latency {
			t.Errorf("through %s the round trip took %s: want at least twice %s", addr, rtt, latency)
		}
	}
	addr := os.Getenv("TEMPORAL_ADDRESS")
	stop()
	stopped = true
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after stop", addr)
	}
}
