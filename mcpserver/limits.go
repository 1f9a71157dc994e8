package mcpserver

import (
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"golang.org/x/time/rate"

	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
)

// Limits protect the engines' API quotas and the process's memory from any one caller. Zero
// fields take the defaults; a negative rate or wait turns that limit off.
//
// Over HTTP, each authenticated principal has a share of the requests in flight and of the body
// bytes in memory, taken before the whole: a principal that holds its share is answered 429, and
// the others are still served.
type Limits struct {
	// MaxInFlight bounds the HTTP requests served at once; more are answered 503. Default 512.
	MaxInFlight int
	// MaxInFlightPerPrincipal bounds one principal's share of MaxInFlight; more are answered 429.
	// Default a quarter of MaxInFlight.
	MaxInFlightPerPrincipal int
	// BodyBudget bounds the bytes of HTTP request bodies held at once; a body that does not fit is
	// answered 503. Default 16 MiB: each byte of a body costs about four in memory while it is
	// decoded, so the bodies of the requests in flight cost at most about 64 MiB.
	BodyBudget int64
	// BodyBudgetPerPrincipal bounds one principal's share of BodyBudget; a body that does not fit
	// is answered 429. Default a quarter of BodyBudget (4 MiB: one body of the largest size).
	BodyBudgetPerPrincipal int64
	// MaxWait bounds how long an HTTP request waits for a workflow: a 2025-11-25 tasks/result
	// (then answered with the task's status, to poll), and a call that waits for its result.
	// Default 60s.
	MaxWait time.Duration
	// CallsPerSecond bounds each principal's tools/call, with bursts of twice as many. Default 10.
	CallsPerSecond float64
	// PollsPerSecond bounds each principal's other task requests (tasks/*, tools/async/*, and
	// subscriptions/listen, which replaces polls), with bursts of twice as many. Default 50.
	PollsPerSecond float64
	// MaxFollowed bounds the tasks that listens follow at once, each a goroutine that reads its
	// task on every change; a listen that would follow more is refused. Default 20,000.
	MaxFollowed int
	// MaxFollowedPerPrincipal bounds one principal's share of MaxFollowed. Default a quarter of it.
	MaxFollowedPerPrincipal int
	// MaxListen bounds how long one listen streams: then it ends with its result, as it does when
	// the bearer token it came with expires, and the client listens again. Default 1 hour.
	MaxListen time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.MaxInFlight == 0 {
		l.MaxInFlight = 512
	}
	if l.MaxInFlightPerPrincipal == 0 {
		l.MaxInFlightPerPrincipal = max(1, l.MaxInFlight/4)
	}
	if l.BodyBudget == 0 {
		l.BodyBudget = 16 << 20
	}
	if l.BodyBudgetPerPrincipal == 0 {
		l.BodyBudgetPerPrincipal = l.BodyBudget / 4
	}
	if l.MaxWait == 0 {
		l.MaxWait = time.Minute
	}
	if l.CallsPerSecond == 0 {
		l.CallsPerSecond = 10
	}
	if l.PollsPerSecond == 0 {
		l.PollsPerSecond = 50
	}
	if l.MaxFollowed == 0 {
		l.MaxFollowed = 20000
	}
	if l.MaxFollowedPerPrincipal == 0 {
		l.MaxFollowedPerPrincipal = max(1, l.MaxFollowed/4)
	}
	if l.MaxListen == 0 {
		l.MaxListen = time.Hour
	}
	return l
}

// rateLimits keeps one pair of token buckets per principal. Principals idle for a minute are
// forgotten, so that the map stays as small as the set of active callers. Not golang-lru's
// expirable LRU: it counts the minute from a principal's last Add (a Get does not renew it), on
// the wall clock rather than the request's, so each request would write as well as read, which
// made allow more than twice as slow; and its sweeping goroutine never ends.
type rateLimits struct {
	calls, polls rate.Limit
	// polled are the methods the polls' bucket limits.
	polled  map[string]bool
	now     func() time.Time
	mu      sync.Mutex
	buckets map[string]*buckets
	swept   time.Time
}

type buckets struct {
	calls, polls bucket
	seen         time.Time
}

// bucket is one of a principal's token buckets, and what pays for its requests' further engine
// calls from it: made with the bucket, so that it names the principal's charge for as long as the
// principal is active (the sweeps share what they keep of a caller's reads by it).
type bucket struct {
	*rate.Limiter
	pay *tasks.Payer
}

// newRateLimits limits tools/call, and the methods polled (the task methods and listens), at l's
// rates.
func newRateLimits(l Limits, now func() time.Time, polled []string) *rateLimits {
	limit := func(perSecond float64) rate.Limit {
		if perSecond < 0 {
			return rate.Inf
		}
		return rate.Limit(perSecond)
	}
	r := &rateLimits{calls: limit(l.CallsPerSecond), polls: limit(l.PollsPerSecond), polled: map[string]bool{}, now: now, buckets: map[string]*buckets{}}
	for _, m := range polled {
		r.polled[m] = true
	}
	return r
}

// bucket is the method's bucket of a request, or nil for methods that are not limited.
func (r *rateLimits) bucket(b *buckets, method string) *bucket {
	switch {
	case method == "tools/call":
		return &b.calls
	case r.polled[method]:
		return &b.polls
	}
	return nil
}

// newBucket is a bucket of limit, with its payer: each engine call it pays for takes a token,
// never cancelled (the call is made).
func (r *rateLimits) newBucket(limit rate.Limit) bucket {
	l := rate.NewLimiter(limit, burst(limit))
	return bucket{Limiter: l, pay: tasks.NewPayer(func() { l.ReserveN(r.now(), 1) })}
}

// limiter is principal's bucket for method, nil for methods that are not limited.
func (r *rateLimits) limiter(principal, method string, now time.Time) *bucket {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now.Sub(r.swept) > time.Minute {
		for p, b := range r.buckets {
			if now.Sub(b.seen) > time.Minute {
				delete(r.buckets, p)
			}
		}
		r.swept = now
	}
	b, ok := r.buckets[principal]
	if !ok {
		b = &buckets{calls: r.newBucket(r.calls), polls: r.newBucket(r.polls)}
		r.buckets[principal] = b
	}
	b.seen = now
	return r.bucket(b, method)
}

// allow takes one request of principal from its bucket; when the bucket is empty (or in debt
// for the engine calls of its earlier requests) it says how long until it would not be.
func (r *rateLimits) allow(principal, method string, now time.Time) (time.Duration, bool) {
	lim := r.limiter(principal, method, now)
	if lim == nil {
		return 0, true
	}
	res := lim.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, false
	}
	return 0, true
}

func burst(l rate.Limit) int {
	if l == rate.Inf {
		return 0
	}
	return max(1, int(math.Ceil(2*float64(l))))
}

// errRateLimited is the JSON-RPC error of a request over its principal's rate.
func errRateLimited(method string, retry time.Duration) *jsonrpc.Error {
	ms := max(1, retry.Milliseconds())
	data, _ := json.Marshal(map[string]any{"retryAfterMs": ms, "retryable": true})
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Data: data,
		Message: fmt.Sprintf("Rate limit exceeded for %s: retry in %d ms (the limit protects the workflow engine's API quota)", method, ms)}
}

// shares bounds what requests hold at once of one capacity (requests in flight, bytes of bodies,
// tasks that listens follow): each principal within its share, and all of them within the whole.
// The local principal (no one authenticated) is the only one, and has the whole.
type shares struct {
	total, each int64
	mu          sync.Mutex
	used        int64
	held        map[string]int64
}

func newShares(total, each int64) *shares {
	return &shares{total: total, each: min(each, total), held: map[string]int64{}}
}

// Take takes n for principal, unless that would exceed its share (own) or the whole.
func (c *shares) Take(principal string, n int64) (ok, own bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if principal != mapping.LocalPrincipal && c.held[principal]+n > c.each {
		return false, true
	}
	if c.used+n > c.total {
		return false, false
	}
	c.used += n
	c.held[principal] += n
	return true, false
}

// Give gives back what Take took.
func (c *shares) Give(principal string, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.used -= n
	if c.held[principal] -= n; c.held[principal] <= 0 {
		delete(c.held, principal)
	}
}
