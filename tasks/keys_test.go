package tasks

import (
	"fmt"
	"testing"
	"time"
)

// TestClientKeysPerCaller: one caller's keys push out its own remembered keys only, and the
// callers remembered are bounded.
func TestClientKeysPerCaller(t *testing.T) {
	c := newClientKeys()
	c.found("alice", "her-token", "echo")
	until := time.Now().Add(time.Minute)
	for i := range 10 * keysPerCaller {
		c.unknown("bob", fmt.Sprint("probe-", i), until)
	}
	if got, ok := c.get("alice", "her-token"); !ok || got.tool != "echo" {
		t.Fatal("bob's misses pushed out alice's")
	}
	if _, ok := c.get("bob", "probe-0"); ok {
		t.Fatal("bob keeps more than his few")
	}
	if got, ok := c.get("bob", fmt.Sprint("probe-", 10*keysPerCaller-1)); !ok || got.tool != "" || !got.until.Equal(until) {
		t.Fatalf("bob's last miss: %+v, %v", got, ok)
	}
	if _, ok := c.get("alice", "probe-0"); ok {
		t.Fatal("bob's token is known for alice")
	}
	for i := range 2 * keyCallers {
		c.unknown(fmt.Sprint("caller-", i), "t", until)
	}
	if n := c.callers.Len(); n != keyCallers {
		t.Fatalf("%d callers kept, want %d", n, keyCallers)
	}
}
