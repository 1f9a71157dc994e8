package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// The engines, as the soak names them.
const (
	engineTemporal = "temporal"
	engineSFN      = "stepfunctions"
)

// The kinds of call a client makes.
const (
	callEcho    = "echo"    // wait, then echo the text
	callFail    = "fail"    // wait, then fail with the reason
	callApprove = "approve" // ask whether to deploy, answered by the client
	callCancel  = "cancel"  // a long wait, cancelled by the client
	callKeyed   = "keyed"   // an echo started twice with the same SEP-1391 client token
)

// callKinds is what each dialect calls, as weights: every kind the dialect can do over
// stateless HTTP (SEP-1391 has no cancel there, a waiting call no question and no cancel).
var callKinds = map[string][]string{
	dialectExtension:  {callEcho, callEcho, callEcho, callFail, callApprove, callApprove, callCancel},
	dialectLegacy:     {callEcho, callEcho, callEcho, callFail, callApprove, callApprove, callCancel},
	dialectOperations: {callEcho, callEcho, callFail, callApprove, callApprove, callKeyed, callKeyed},
	dialectHandles:    {callEcho, callEcho, callEcho, callFail, callApprove, callApprove, callCancel},
	dialectWait:       {callEcho},
}

// tools names the example tool of each kind on each engine (soak.yaml adds the waiting echoes).
var tools = map[string]map[string]string{
	engineTemporal: {callEcho: "wait_and_echo", callFail: "wait_and_fail", callApprove: "approve_deployment", "waiting": "echo_waiting"},
	engineSFN:      {callEcho: "sfn_wait_and_echo", callFail: "sfn_wait_and_fail", callApprove: "sfn_approve_deployment", "waiting": "sfn_echo_waiting"},
}

// record is one logical call: what a user asked for once, however many requests it took.
type record struct {
	marker   string // unique in the run: in the call's input, and so in its execution's
	dialect  string
	kind     string
	engine   string
	tool     string
	keyed    bool
	acked    time.Time // start answered
	due      time.Time // when the workflow should end, as far as the client can tell
	finished time.Time // answered correctly, or found wrong
	outcome  string    // "" while open, then outcomeCorrect or outcomeWrong
	detail   string    // what was wrong
	// startTries counts start requests; startCut is set when one of them may have reached a
	// replica and got no answer (a retry may then start a second execution).
	startTries int
	startCut   bool
}

const (
	outcomeCorrect = "correct"
	outcomeWrong   = "wrong"
)

// client is one simulated user with one SDK, making calls one after the other.
type client struct {
	id      int
	rng     *rand.Rand
	s       *session
	run     *soak
	sfnRate float64 // share of calls that go to Step Functions
}

// loop makes calls until the run stops taking new ones, then follows the last one to its end.
func (c *client) loop(ctx context.Context) {
	if c.s.dialect == dialectLegacy {
		c.retry(ctx, nil, "initialize", func(ctx context.Context) error { return c.s.initialize(ctx) })
	}
	for seq := 0; ctx.Err() == nil && !c.run.stopStarting(); seq++ {
		c.do(ctx, seq)
		// Think time: the next call comes a few seconds later, as from a person or an agent.
		if !sleep(ctx, time.Duration(2000+c.rng.IntN(6000))*time.Millisecond) {
			return
		}
	}
}

// do makes one call and follows it to its end.
func (c *client) do(ctx context.Context, seq int) {
	kinds := callKinds[c.s.dialect]
	kind := kinds[c.rng.IntN(len(kinds))]
	engine := engineTemporal
	if c.rng.Float64() < c.sfnRate {
		engine = engineSFN
	}
	rec := &record{marker: fmt.Sprintf("%s-c%d-%d", c.run.id, c.id, seq), dialect: c.s.dialect,
		kind: kind, engine: engine, keyed: c.s.dialect == dialectOperations}
	c.run.stats.add(rec)
	args, length := c.arguments(rec)
	var answer map[string]any
	if kind == callApprove {
		answer = map[string]any{"approve": c.rng.IntN(4) > 0, "reason": "reason-" + rec.marker}
	}

	var st started
	err := c.retry(ctx, rec, "start", func(ctx context.Context) error {
		rec.startTries++
		var err error
		st, err = c.s.start(ctx, rec.tool, args, rec.marker, length+time.Minute)
		if err != nil && mayHaveStarted(err) {
			rec.startCut = true
		}
		return err
	})
	if err != nil {
		return
	}
	rec.acked = time.Now()
	rec.due = rec.acked.Add(length)
	if st.result != nil { // a waiting call answers with the result
		c.settle(rec, c.judge(rec, *st.result, answer))
		return
	}
	ids := []string{st.id}
	if kind == callKeyed {
		// The same token again, as a client does that did not see the first answer: the same
		// execution must answer, whichever token the client reads it by.
		var again started
		if err := c.retry(ctx, rec, "start again", func(ctx context.Context) error {
			var err error
			again, err = c.s.start(ctx, rec.tool, args, rec.marker, 0)
			return err
		}); err != nil {
			return
		}
		ids = []string{rec.marker, st.id, again.id}
	}
	c.follow(ctx, rec, ids, st.interval, answer)
}

// arguments are the tool's arguments for the record's call, with its marker, and how long the
// workflow takes.
func (c *client) arguments(rec *record) (map[string]any, time.Duration) {
	seconds := 1 + c.rng.IntN(6)
	switch rec.kind {
	case callFail:
		rec.tool = tools[rec.engine][callFail]
		return map[string]any{"seconds": seconds, "reason": rec.marker}, time.Duration(seconds) * time.Second
	case callApprove:
		rec.tool = tools[rec.engine][callApprove]
		return map[string]any{"version": rec.marker, "env": "staging", "stepSeconds": 1}, 2 * time.Second
	case callCancel:
		rec.tool = tools[rec.engine][callEcho]
		return map[string]any{"seconds": 600, "text": rec.marker}, 600 * time.Second
	}
	rec.tool = tools[rec.engine][callEcho]
	if rec.dialect == dialectWait {
		rec.tool = tools[rec.engine]["waiting"]
	}
	return map[string]any{"seconds": seconds, "text": rec.marker}, time.Duration(seconds) * time.Second
}

// follow polls the task until it ends, answering its question or cancelling it on the way, and
// judges how it ended. ids are the ids the task answers to: each poll takes the next.
func (c *client) follow(ctx context.Context, rec *record, ids []string, interval time.Duration, answer map[string]any) {
	var cancelled, answered time.Time
	listening, stop := context.WithCancel(ctx)
	defer stop()
	notified := c.listenTo(listening, ids[0])
	var rd reading
	for n := 0; ; n++ {
		id := ids[n%len(ids)]
		if !rd.notified {
			if err := c.retry(ctx, rec, "poll", func(ctx context.Context) error {
				var err error
				rd, err = c.poll(ctx, rec.engine, id)
				return err
			}); err != nil && ctx.Err() != nil {
				return
			} else if err != nil {
				// A non-retryable error (counted): a real client would give up here; the soak goes
				// on polling to learn whether the task was lost.
				sleep(ctx, time.Second)
				continue
			}
		}
		if rd.interval > 0 {
			interval = rd.interval
		}
		switch rd.status {
		case "working":
			if rec.kind == callCancel && cancelled.IsZero() {
				c.cancel(ctx, rec, id)
				cancelled = time.Now()
			}
		case "input_required":
			// An answer already given may not show yet in a replica's freshness window; one that
			// shows for long after is given again, which is harmless.
			if answer != nil && (answered.IsZero() || time.Since(answered) > 5*time.Second) {
				key := "approve"
				if len(rd.questions) > 0 {
					key = rd.questions[0]
				}
				if c.retry(ctx, rec, "answer", func(ctx context.Context) error { return c.s.answer(ctx, ids[len(ids)-1], key, answer) }) == nil {
					answered = time.Now()
					rec.due = answered.Add(time.Second)
				}
			}
		case "completed", "failed":
			if rec.kind == callCancel {
				c.settle(rec, "a cancelled task ended "+rd.status)
				return
			}
			res := rd.result
			if res == nil {
				var r toolResult
				if c.retry(ctx, rec, "result", func(ctx context.Context) error {
					var err error
					r, err = c.s.result(ctx, id)
					return err
				}) != nil {
					continue
				}
				res = &r
			}
			if notified != nil {
				c.run.stats.ended(rd.notified)
			}
			c.settle(rec, c.judge(rec, *res, answer))
			return
		case "cancelled":
			if rec.kind == callCancel {
				c.settle(rec, "")
			} else {
				c.settle(rec, "the task was cancelled, though nobody cancelled it")
			}
			return
		default:
			c.settle(rec, fmt.Sprintf("unknown status %q", rd.status))
			return
		}
		var ok bool
		if rd, ok = c.next(ctx, notified, min(max(interval, 500*time.Millisecond), 5*time.Second)); !ok {
			return
		}
	}
}

// listenTo listens to task id when the client's dialect can (the tasks extension): its
// notifications come on the channel, nil otherwise. The listen ends with ctx.
func (c *client) listenTo(ctx context.Context, id string) <-chan reading {
	if c.s.dialect != dialectExtension {
		return nil
	}
	seen := make(chan reading, 1)
	go c.listen(ctx, id, seen)
	return seen
}

// next waits for the next poll, or for a notification that comes first (a listener polls at a
// tenth of the pace as well: a stream may be between replicas), and reports false when ctx ended.
func (c *client) next(ctx context.Context, notified <-chan reading, interval time.Duration) (reading, bool) {
	if notified != nil {
		interval *= 10
	}
	t := time.NewTimer(interval)
	defer t.Stop()
	select {
	case rd := <-notified:
		return rd, true
	case <-t.C:
		return reading{}, true
	case <-ctx.Done():
		return reading{}, false
	}
}

// poll is one timed poll of a task on engine.
func (c *client) poll(ctx context.Context, engine, id string) (reading, error) {
	begin := time.Now()
	rd, err := c.s.poll(ctx, id)
	c.run.stats.poll(engine, begin, time.Since(begin), err == nil)
	return rd, err
}

// cancel asks the task to stop; a repeated cancel finding it ended is the first one's success.
func (c *client) cancel(ctx context.Context, rec *record, id string) {
	tries := 0
	c.retry(ctx, rec, "cancel", func(ctx context.Context) error {
		tries++
		err := c.s.cancel(ctx, id)
		if tries > 1 && alreadyEnded(err) {
			return nil
		}
		return err
	})
}

// judge says what is wrong with a result ("" when it is what the workflow must produce).
func (c *client) judge(rec *record, r toolResult, answer map[string]any) string {
	switch rec.kind {
	case callFail:
		if !r.IsError || !strings.Contains(r.text(), rec.marker) {
			return fmt.Sprintf("want a tool error naming %s, got isError=%v %.200q", rec.marker, r.IsError, r.text())
		}
		return ""
	case callApprove:
		want := map[string]any{"version": rec.marker, "env": "staging", "deployed": answer["approve"], "reason": answer["reason"]}
		return sameStructured(r, want)
	}
	return sameStructured(r, map[string]any{"text": rec.marker})
}

func sameStructured(r toolResult, want map[string]any) string {
	var got map[string]any
	json.Unmarshal(r.StructuredContent, &got)
	wantJSON, _ := json.Marshal(want)
	gotJSON, _ := json.Marshal(got)
	if r.IsError || string(gotJSON) != string(wantJSON) {
		return fmt.Sprintf("want %s, got isError=%v structuredContent %s (%.200q)", wantJSON, r.IsError, r.StructuredContent, r.text())
	}
	return ""
}

func (c *client) settle(rec *record, wrong string) {
	c.run.stats.settle(rec, wrong)
}

// retry runs f until it succeeds, retrying what is retryable with a growing pause (250 ms up to
// 2 s, jittered), as SDKs do; a non-retryable error is counted and returned. rec may be nil.
func (c *client) retry(ctx context.Context, rec *record, what string, f func(context.Context) error) error {
	pause := 250 * time.Millisecond
	for {
		err := f(ctx)
		if err == nil || ctx.Err() != nil {
			return err
		}
		var ce *callError
		if !errors.As(err, &ce) || !ce.retryable {
			c.run.stats.nonRetryable(rec, what, err)
			return err
		}
		c.run.stats.retryable(what, ce.kind)
		if !sleep(ctx, pause/2+time.Duration(c.rng.Int64N(int64(pause)))) {
			return ctx.Err()
		}
		pause = min(pause*2, 2*time.Second)
	}
}

// mayHaveStarted reports whether a failed start may have reached a replica, and so the engine:
// all but the front's own answer that no replica took the request.
func mayHaveStarted(err error) bool {
	var ce *callError
	return !errors.As(err, &ce) || !strings.Contains(ce.msg, "no replica answers")
}
