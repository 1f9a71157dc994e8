// Package apifaults puts proxies in front of real engines that answer some calls the way the
// engine's own API answers under load: throttled (Step Functions' ThrottlingException over HTTP,
// Temporal's ResourceExhausted over gRPC) and, for Step Functions, executions that are not yet
// visible to reads right after they start (its reads are eventually consistent). Every other call
// reaches the engine unchanged, and the proxies count the calls by operation, so that a test can
// tell what reached the engine.
//
// Faults at the network level (latency, resets, partitions) are another package's concern: these
// are answers of the engine's API, which a TCP proxy cannot forge.
package apifaults

import (
	"sync"
	"sync/atomic"
	"time"
)

// throttler picks an exact fraction of calls to throttle, spread evenly: call n (from 1) is
// throttled when floor(n×f) grows, so that any run of calls holds the fraction to within one call,
// and a run is the same every time.
type throttler struct {
	mu       sync.Mutex
	fraction float64
	ops      map[string]bool // the operations it throttles; nil: all
	n        int64
}

func (t *throttler) set(fraction float64, ops []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.fraction, t.n, t.ops = min(max(fraction, 0), 1), 0, nil
	if len(ops) > 0 {
		t.ops = map[string]bool{}
		for _, op := range ops {
			t.ops[op] = true
		}
	}
}

// throttle reports whether this call of op is to be throttled.
func (t *throttler) throttle(op string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fraction == 0 || (t.ops != nil && !t.ops[op]) {
		return false
	}
	before := int64(float64(t.n) * t.fraction)
	t.n++
	return int64(float64(t.n)*t.fraction) > before
}

// counts are calls by operation.
type counts struct {
	mu sync.Mutex
	m  map[string]*atomic.Int64
}

func (c *counts) add(op string) {
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*atomic.Int64{}
	}
	n, ok := c.m[op]
	if !ok {
		n = &atomic.Int64{}
		c.m[op] = n
	}
	c.mu.Unlock()
	n.Add(1)
}

func (c *counts) get(op string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, ok := c.m[op]; ok {
		return n.Load()
	}
	return 0
}

func (c *counts) all() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int64, len(c.m))
	for op, n := range c.m {
		out[op] = n.Load()
	}
	return out
}

// limiter is a token bucket over some operations, as an engine enforces a quota of its API: burst
// calls at once after a quiet spell, refilled at perSecond; a call that finds no token is refused.
type limiter struct {
	mu        sync.Mutex
	perSecond float64
	burst     float64
	tokens    float64
	last      time.Time
	ops       map[string]bool // the operations it limits; nil: all
	now       func() time.Time
}

func (l *limiter) set(perSecond float64, burst int, ops []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.now == nil {
		l.now = time.Now
	}
	l.perSecond, l.burst, l.ops = perSecond, float64(max(burst, 1)), nil
	l.tokens, l.last = l.burst, l.now() // a full bucket, as a quota after a quiet spell
	if len(ops) > 0 {
		l.ops = map[string]bool{}
		for _, op := range ops {
			l.ops[op] = true
		}
	}
}

// refuse reports whether this call of op finds the bucket empty; a call it lets through takes a
// token.
func (l *limiter) refuse(op string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perSecond <= 0 || (l.ops != nil && !l.ops[op]) {
		return false
	}
	now := l.now()
	l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.perSecond)
	l.last = now
	if l.tokens < 1 {
		return true
	}
	l.tokens--
	return false
}
