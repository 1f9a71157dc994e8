package tasks

import (
	"fmt"
	"testing"
	"time"
)

// TestUnknownKeysPerCaller: one caller's misses push out its own remembered keys only, and
// the callers remembered are bounded.
func TestUnknownKeysPerCaller(t *testing.T) {
	u := newUnknownKeys()
	until := time.Now().Add(time.Minute)
	u.remember("alice", "her-token", until)
	for i := range 10 * unknownPerCaller {
		u.remember("bob", fmt.Sprint("probe-", i), until)
	}
	if got, ok := u.until("alice", "her-token"); !ok || !got.Equal(until) {
		t.Fatal("bob's misses pushed out alice's")
	}
	if _, ok := u.until("bob", "probe-0"); ok {
		t.Fatal("bob keeps more than his few")
	}
	if _, ok := u.until("alice", "probe-0"); ok {
		t.Fatal("bob's token is known for alice")
	}
	u.forget("alice", "her-token")
	if _, ok := u.until("alice", "her-token"); ok {
		t.Fatal("a forgotten token is still known")
	}
	for i := range 2 * unknownCallers {
		u.remember(fmt.Sprint("caller-", i), "t", until)
	}
	if n := u.callers.Len(); n != unknownCallers {
		t.Fatalf("%d callers kept, want %d", n, unknownCallers)
	}
}
