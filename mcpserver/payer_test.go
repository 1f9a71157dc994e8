package mcpserver

import (
	"testing"
	"time"
)

// TestPayerIsThePrincipals: the requests of one principal that one bucket limits pay through one
// payer for as long as the principal is kept (what the sweeps carry of its reads is shared by
// it); another principal's, or another bucket's, is another.
func TestPayerIsThePrincipals(t *testing.T) {
	r := newRateLimits(Limits{}.withDefaults(), time.Now, []string{"tasks/get", "tasks/result"})
	now := time.Now()
	alice := r.limiter("alice", "tasks/get", now).pay
	if alice == nil || r.limiter("alice", "tasks/result", now).pay != alice {
		t.Fatal("two polls of alice's pay through two payers")
	}
	if r.limiter("bob", "tasks/get", now).pay == alice || r.limiter("alice", "tools/call", now).pay == alice {
		t.Fatal("bob's polls, or alice's calls, pay through alice's polls' payer")
	}
	if r.limiter("alice", "tools/list", now) != nil {
		t.Fatal("tools/list is limited")
	}
}
