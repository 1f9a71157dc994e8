package apifaults

import (
	"testing"
	"time"
)

// The quota lets a full bucket through at once, then a call per refill, and only the operations
// it names.
func TestLimiter(t *testing.T) {
	now := time.Unix(0, 0)
	l := &limiter{now: func() time.Time { return now }}
	l.set(2, 3, []string{"ListExecutions"})
	passed := 0
	for range 5 {
		if !l.refuse("ListExecutions") {
			passed++
		}
	}
	if passed != 3 {
		t.Errorf("5 calls at once on a bucket of 3: %d passed, want 3", passed)
	}
	if l.refuse("DescribeExecution") {
		t.Error("an operation the quota does not name was refused")
	}
	now = now.Add(time.Second) // two tokens
	passed = 0
	for range 3 {
		if !l.refuse("ListExecutions") {
			passed++
		}
	}
	if passed != 2 {
		t.Errorf("3 calls a second later at 2 a second: %d passed, want 2", passed)
	}
	l.set(0, 0, nil)
	if l.refuse("ListExecutions") {
		t.Error("a lifted quota refused a call")
	}
}
