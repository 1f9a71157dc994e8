package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/temporal"
	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/internal/mcpclient"
	"github.com/taskgate/taskgate/mapping"
)

// Figures 1 and 2: latency of one call, direct against through taskgate, sequential.

// interleave runs warm rounds, then n rounds in which every op runs once, so that drift on a noisy
// machine hits all of them alike, in the order of sequence. It returns each op's sorted latencies.
func interleave(ctx context.Context, names []string, ops []func(context.Context) error, warm, n int) ([][]time.Duration, error) {
	lat := make([][]time.Duration, len(ops))
	for round, order := range sequence(len(ops), warm+n) {
		for _, i := range order {
			t0 := time.Now()
			if err := ops[i](ctx); err != nil {
				return nil, fmt.Errorf("%s: %w", names[i], err)
			}
			if round >= warm {
				lat[i] = append(lat[i], time.Since(t0))
			}
		}
	}
	for _, l := range lat {
		slices.Sort(l)
	}
	return lat, nil
}

// sequence is the order of k ops in each of rounds rounds: a fresh shuffle each round (the same
// shuffles every run), so that each op runs at every position, and right after every other op,
// about equally often. The order matters: an op that runs right after an engine call pays for
// what the engine and the client's connection still do once the call has returned, and a
// rotation of one fixed order put the taskgate poll right after the direct call in nearly every
// round (it cost the poll rows 0.05 to 0.15 ms on the 2-core machine of test/bench/RESULTS.md).
func sequence(k, rounds int) [][]int {
	rng := rand.New(rand.NewPCG(uint64(k), uint64(rounds)))
	orders := make([][]int, rounds)
	for r := range orders {
		orders[r] = rng.Perm(k)
	}
	return orders
}

// addLatency records one repetition's p50, p90 and p99 of a taskgate op against the direct op.
func (b *bench) addLatency(figure int, name string, direct, taskgate []time.Duration) {
	for _, p := range []float64{50, 90, 99} {
		b.res.add(figure, fmt.Sprintf("%s p%.0f", name, p), "ms", percentile(direct, p), percentile(taskgate, p))
	}
}

func warmRounds(n int) int { return min(max(3, n/10), 20) }

// unlimited lifts the read budgets of the bench's engine blocks.
var unlimited = map[string]adapters.Budget{"temporal": {}, "aws": {}, "restate": {}}

// pollVariant is one way of asking taskgate for a task's status.
type pollVariant struct {
	key, label string
	poll       func(ctx context.Context, id, want string) error
}

// pollFigure: figure 1.
func (b *bench) pollFigure(ctx context.Context) error {
	b.logf("poll latency (figure 1)")
	// Every poll asks the engine (FreshFor -1, no read budget): with readings reused, polls
	// milliseconds apart would measure the reuse, not a poll. Ended tasks are answered from the
	// cache of ended outcomes, which is on regardless.
	hc, err := b.startChild(ctx, "poll-http", childConfig{FreshFor: -1, Budgets: unlimited})
	if err != nil {
		return err
	}
	var sc *child
	if b.opts.wants("poll-stdio") {
		if sc, err = b.startChild(ctx, "poll-stdio", childConfig{FreshFor: -1, Budgets: unlimited, Stdio: true}); err != nil {
			return err
		}
	}
	modern := b.modern(hc.endpoint())
	var overStdio *mcpclient.Client
	if sc != nil {
		overStdio = mcpclient.Modern(sc.stdio, extTasks)
	}
	legacy := mcpclient.Legacy(mcpclient.HTTP{URL: hc.endpoint(), Client: b.http})
	noTasks := mcpclient.Modern(mcpclient.HTTP{URL: hc.endpoint(), Client: b.http}) // gets handles
	floors := map[string]*mcpclient.Client{}
	for _, name := range []string{"working", "completed", "working-read", "completed-read"} {
		floors[name] = b.modern(hc.base + "/floor/" + name)
	}
	var variants []pollVariant
	for _, v := range []pollVariant{
		{"poll-http", "tasks/get over HTTP", func(ctx context.Context, id, want string) error {
			_, err := get(ctx, modern, id, want)
			return err
		}},
		{"poll-http", "the HTTP floor", func(ctx context.Context, id, want string) error {
			_, err := get(ctx, floors[want], id, want)
			return err
		}},
		{"poll-stdio", "tasks/get over stdio", func(ctx context.Context, id, want string) error {
			_, err := get(ctx, overStdio, id, want)
			return err
		}},
		{"poll-legacy", "2025-11-25 tasks/get over HTTP", func(ctx context.Context, id, want string) error {
			_, err := get(ctx, legacy, id, want)
			return err
		}},
		{"poll-handle", "task_status (handle tool) over HTTP", func(ctx context.Context, id, want string) error {
			a, err := call(ctx, noTasks, "tools/call", map[string]any{"name": "task_status", "arguments": map[string]any{"handle": id}})
			if err != nil {
				return err
			}
			var s struct{ Status string }
			json.Unmarshal(a.StructuredContent, &s)
			if a.IsError || s.Status != want {
				return fmt.Errorf("task_status: %s (isError %v), want %s", a.StructuredContent, a.IsError, want)
			}
			return nil
		}},
	} {
		if b.opts.wants(v.key) {
			variants = append(variants, v)
		}
	}

	type target struct {
		engine, state string
		setup         func() (string, error)
		direct        func(ctx context.Context, r adapters.Ref) error
		block         string // the engine block whose direct read the child makes; "": none
	}
	temporalDirect := func(want enumspb.WorkflowExecutionStatus) func(ctx context.Context, r adapters.Ref) error {
		return func(ctx context.Context, r adapters.Ref) error {
			st, err := b.describeTemporal(ctx, r)
			if err == nil && st != want {
				err = fmt.Errorf("DescribeWorkflowExecution: %s, want %s", st, want)
			}
			return err
		}
	}
	sfnDirect := func(want string) func(ctx context.Context, r adapters.Ref) error {
		return func(ctx context.Context, r adapters.Ref) error {
			st, err := b.describeSFN(ctx, r.ID)
			if err == nil && st != want {
				err = fmt.Errorf("DescribeExecution: %s, want %s", st, want)
			}
			return err
		}
	}
	restateDirect := func(want ...string) func(ctx context.Context, r adapters.Ref) error {
		return func(ctx context.Context, r adapters.Ref) error {
			st, err := b.describeRestate(ctx, invocationOf(r))
			if err == nil && !slices.Contains(want, st) {
				err = fmt.Errorf("the admin API's status %s, want %v", st, want)
			}
			return err
		}
	}
	restateLikeTaskgate := func(ctx context.Context, r adapters.Ref) error {
		st, err := b.describeLikeTaskgate(ctx, r)
		if err == nil && st != "running" && st != "suspended" {
			err = fmt.Errorf("the driver's status %s, want running or suspended", st)
		}
		return err
	}
	ended := func(tool string) func() (string, error) {
		return func() (string, error) {
			if tool == toolEcho {
				if err := b.ensureWorker(ctx); err != nil {
					return "", err
				}
			}
			id, err := b.start(ctx, modern, tool, map[string]any{"seconds": 0, "text": "ended"})
			if err == nil {
				err = waitEnded(ctx, modern, id)
			}
			return id, err
		}
	}
	running := func(tool string) func() (string, error) {
		return func() (string, error) {
			return b.start(ctx, modern, tool, map[string]any{"seconds": 3 * 3600, "text": "running"})
		}
	}
	var targets []target
	if b.opts.engines["temporal"] {
		targets = append(targets,
			target{"Temporal", "running", running(toolRunning), temporalDirect(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING), "temporal"},
			target{"Temporal", "ended", ended(toolEcho), temporalDirect(enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED), ""})
	}
	if b.opts.engines["sfn"] {
		targets = append(targets,
			target{"Step Functions", "running", running(toolSFN), sfnDirect("RUNNING"), "aws"},
			target{"Step Functions", "ended", ended(toolSFN), sfnDirect("SUCCEEDED"), ""})
	}
	if b.opts.engines["restate"] {
		// A sleeping handler is running, or suspended once its deployment let it go.
		targets = append(targets,
			target{"Restate", "running", running(toolRestate), restateDirect("running", "suspended"), ""},
			target{"Restate (direct: the driver's query)", "running", running(toolRestate), restateLikeTaskgate, ""},
			target{"Restate", "ended", ended(toolRestate), restateDirect("completed"), ""})
	}
	for _, tg := range targets {
		if !b.opts.states[tg.state] {
			continue
		}
		id, err := tg.setup()
		if err != nil {
			return fmt.Errorf("%s %s task: %w", tg.engine, tg.state, err)
		}
		ref, err := b.ref(id)
		if err != nil {
			return err
		}
		want := map[string]string{"running": "working", "ended": "completed"}[tg.state]
		measured := variants
		if b.opts.wants("poll-http") {
			if err := b.storeFloorAnswer(ctx, hc, modern, id, want, "", ref); err != nil {
				return fmt.Errorf("%s %s task: %w", tg.engine, tg.state, err)
			}
			if tg.block != "" {
				if err := b.storeFloorAnswer(ctx, hc, modern, id, want+"-read", tg.block, ref); err != nil {
					return fmt.Errorf("%s %s task: %w", tg.engine, tg.state, err)
				}
				measured = append(slices.Clip(variants), pollVariant{"poll-http", "the HTTP floor with the engine read", func(ctx context.Context, id, want string) error {
					_, err := get(ctx, floors[want+"-read"], id, want)
					return err
				}})
			}
		}
		names := []string{"direct"}
		ops := []func(context.Context) error{func(ctx context.Context) error { return tg.direct(ctx, ref) }}
		for _, v := range measured {
			names = append(names, v.label)
			ops = append(ops, func(ctx context.Context) error { return v.poll(ctx, id, want) })
		}
		for rep := range b.opts.reps {
			lat, err := interleave(ctx, names, ops, warmRounds(b.opts.n), b.opts.n)
			if err != nil {
				return fmt.Errorf("poll %s %s task: %w", tg.engine, tg.state, err)
			}
			for i, v := range measured {
				b.addLatency(1, fmt.Sprintf("%s, %s task: %s", tg.engine, tg.state, v.label), lat[0], lat[i+1])
			}
			b.logf("  %s %s task, rep %d: direct p50 %.2f ms; %s", tg.engine, tg.state, rep+1, percentile(lat[0], 50), medians(names[1:], lat[1:]))
		}
	}
	b.res.note(1, "Direct: one DescribeWorkflowExecution RPC (Temporal), DescribeExecution call (Step Functions) or query of the admin API (Restate: SELECT status FROM sys_invocation WHERE id = ... ORDER BY created_at DESC LIMIT 1, the fastest form found: without ORDER BY ... LIMIT 1 the same point read takes 5 to 45 ms) from the bench process, on the same execution (for an ended task a client would also need its result, one more call for Temporal and Restate: the direct column counts the status read alone). taskgate's Restate read is one query too, of the invocation's columns (for a workflow or virtual object also its questions and progress, in two point-read subqueries; the bench's WaitAndEcho is a plain service, which has no state); the row \"Restate (direct: the driver's query)\" has in its direct column that same read, made by taskgate's driver from the bench process, which leaves what taskgate's server adds to it. The Step Functions state machine (wait and echo: a Wait, then a Pass) can ask nothing and has no progress to report, so taskgate reads no history of it: one DescribeExecution per poll. taskgate: a taskgate child process (the bench binary serving tools.yaml through mcpserver, as `taskgate serve` does; sealed ids; rate limits off) with FreshFor -1 and no read budget, so that every poll of a running task asks the engine; an ended task is answered from the cache of ended outcomes, which is always on.")
	b.res.note(1, "The HTTP floor: the same tasks/get, sent by the same client to the same taskgate child process and answered by a bare net/http handler beside taskgate's (it decodes the request and writes a copy of taskgate's own answer to a poll of the same task, taken before the measure). The HTTP floor with the engine read: the same, answered after one direct read of the execution (DescribeWorkflowExecution, DescribeExecution) made in that handler with the SDK client of taskgate's own engine: taskgate's poll less all of taskgate's own work: what an HTTP poll costs on this machine before any work of taskgate's. A taskgate poll cannot be faster than it; for an ended task it is the whole of what a poll could save.")
	b.res.note(1, "stdio: a real child process serving mcpserver.Server.ServeStdio on its own standard input/output (OS pipes), one request at a time: the same code path as `taskgate serve --stdio`, in a process whose CPU and memory are its own. HTTP: loopback, keep-alive connections. 2025-11-25 tasks/get: the same id, sent with the 2025-11-25 protocol header. task_status: the handle tool a client without task support calls, with the task id as its handle.")
	b.res.note(1, "Method: %d warm-up rounds, then %d rounds per repetition in which the direct call and every taskgate variant run once each, sequentially, in an order shuffled each round (so that each runs right after every other about equally often); %d repetitions. Each row's direct and taskgate values are the median over the repetitions; the ratio is the median of the repetitions' ratios, with their min-max.", warmRounds(b.opts.n), b.opts.n, b.opts.reps)
	return nil
}

// storeFloorAnswer gives the HTTP floor, under name, taskgate's answer to a poll of id, to answer
// with after a direct read of ref on the engine block, if one is named.
func (b *bench) storeFloorAnswer(ctx context.Context, hc *child, c *mcpclient.Client, id, name, block string, ref adapters.Ref) error {
	result, rerr, err := c.Call(ctx, "tasks/get", map[string]any{"taskId": id})
	if err == nil && rerr != nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("the answer for the HTTP floor: %w", err)
	}
	target := hc.base + "/floor/" + name
	if block != "" {
		target += "?" + url.Values{"engine": {block}, "ref": {ref.ID}}.Encode()
	}
	if err := b.post(ctx, http.MethodPut, target, result, nil, nil); err != nil {
		return fmt.Errorf("storing the HTTP floor's answer: %w", err)
	}
	return nil
}

func medians(names []string, lat [][]time.Duration) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %.2f ms", n, percentile(lat[i], 50))
	}
	return s
}

// startFigure: figure 2.
func (b *bench) startFigure(ctx context.Context) error {
	b.logf("start latency (figure 2)")
	c, err := b.startChild(ctx, "start", childConfig{})
	if err != nil {
		return err
	}
	client := b.modern(c.endpoint())
	drivers, err := b.startDrivers(ctx)
	if err != nil {
		return err
	}
	defer drivers.close()
	const input = `{"seconds":10800,"text":"start"}`
	args := map[string]any{"seconds": 3 * 3600, "text": "start"}
	// floor is a tools/call of tool answered by the child's bare handler after its driver's Start.
	floor := func(tool string) func(ctx context.Context) error {
		c := b.modern(c.base + "/floor-start/" + tool)
		return func(ctx context.Context) error {
			a, err := call(ctx, c, "tools/call", map[string]any{"name": tool, "arguments": args})
			if err == nil {
				b.remember(adapters.Ref{ID: a.TaskID})
			}
			return err
		}
	}
	type target struct {
		engine, tool  string
		direct, start func(ctx context.Context) error
	}
	var targets []target
	if b.opts.engines["temporal"] {
		targets = append(targets, target{"Temporal", toolRunning,
			func(ctx context.Context) error {
				_, err := b.startWorkflow(ctx, unpolledQueue, temporalexamples.WaitAndEchoName, input)
				return err
			},
			func(ctx context.Context) error { _, err := b.start(ctx, client, toolRunning, args); return err }})
	}
	if b.opts.engines["sfn"] {
		targets = append(targets, target{"Step Functions", toolSFN,
			func(ctx context.Context) error { _, err := b.startSFN(ctx, input); return err },
			func(ctx context.Context) error { _, err := b.start(ctx, client, toolSFN, args); return err }})
	}
	if b.opts.engines["restate"] {
		targets = append(targets, target{"Restate", toolRestate,
			func(ctx context.Context) error { _, err := b.sendRestate(ctx, input); return err },
			func(ctx context.Context) error { _, err := b.start(ctx, client, toolRestate, args); return err }})
	}
	for _, tg := range targets {
		driver, err := drivers.start(tg.tool, input)
		if err != nil {
			return err
		}
		floorStart := floor(tg.tool)
		for rep := range b.opts.reps {
			names := []string{"direct start", "driver start", "tools/call", "floor"}
			lat, err := interleave(ctx, names, []func(context.Context) error{tg.direct, driver, tg.start, floorStart}, min(3, b.opts.startN), b.opts.startN)
			if err != nil {
				return fmt.Errorf("start %s: %w", tg.engine, err)
			}
			b.addLatency(2, tg.engine+": tools/call -> CreateTaskResult over HTTP", lat[0], lat[2])
			b.addLatency(2, tg.engine+": tools/call, against the same start request sent directly", lat[1], lat[2])
			b.addLatency(2, tg.engine+": the HTTP floor with the engine start, against the same start request sent directly", lat[1], lat[3])
			b.logf("  %s, rep %d: direct p50 %.2f ms, same request direct p50 %.2f ms, tools/call p50 %.2f ms, floor p50 %.2f ms", tg.engine, rep+1,
				percentile(lat[0], 50), percentile(lat[1], 50), percentile(lat[2], 50), percentile(lat[3], 50))
			b.cleanup() // the executions started end between repetitions, so that none accumulate
		}
	}
	b.res.note(2, "Direct: one StartWorkflowExecution RPC (WaitAndEcho on a queue no worker polls), StartExecution call (the wait-and-echo state machine, waiting 3 hours) or send through the Restate ingress (the example WaitAndEcho, waiting 3 hours), from the bench process. taskgate: tools/call of the same workflow or state machine, answered with a CreateTaskResult (its id sealed), over HTTP: one engine call, as the direct start (a Step Functions execution not yet visible to reads is answered as submitted by the polls that find it missing). Same request sent directly: taskgate's driver of the engine, called from the bench process, sends the engine the very request the tools/call makes it send, which carries more than the plain direct start: on Temporal a memo (the input's digest, the caller), on Restate an idempotency key (so that a retried call starts nothing twice); its row is what taskgate adds to the engine's own start of that request.")
	b.res.note(2, "The HTTP floor with the engine start: the same tools/call, sent by the same client to the same taskgate child process and answered by a bare net/http handler beside taskgate's, after one Start made with the child's own driver of the engine (the same request as the row above): taskgate's start less all of taskgate's own work (no schema, no task id, no hooks; its answer is shorter than a CreateTaskResult). A taskgate start cannot be faster than it.")
	b.res.note(2, "Method: %d warm-up rounds, then %d interleaved rounds per repetition, %d repetitions; the executions started are ended between repetitions.", min(3, b.opts.startN), b.opts.startN, b.opts.reps)
	return nil
}

// startDrivers are taskgate's own drivers of the engines, outside any taskgate process: their
// Start sends the engine the very request a tools/call makes it send (Temporal's memo of the
// input's digest and the caller, Restate's idempotency key), so that the ratio against it is
// what taskgate adds to the engine's own start of that request.
type startDrivers struct {
	set     *mapping.Set
	drivers map[string]adapters.Conn // by engine block of the mapping
	b       *bench
}

func (b *bench) startDrivers(ctx context.Context) (*startDrivers, error) {
	set, err := benchTools()
	if err != nil {
		return nil, err
	}
	d := &startDrivers{set: set, b: b, drivers: map[string]adapters.Conn{"aws": b.se}}
	if b.opts.engines["temporal"] {
		if d.drivers["temporal"], err = temporal.New(ctx, temporal.Config{Address: os.Getenv("TEMPORAL_ADDRESS"), Namespace: namespace()}); err != nil {
			return nil, err
		}
	}
	if b.opts.engines["restate"] {
		d.drivers["restate"] = b.restate.driver
	}
	return d, nil
}

// close closes the driver of its own (Temporal's; the others are the bench's).
func (d *startDrivers) close() {
	if c, ok := d.drivers["temporal"]; ok {
		c.Close()
	}
}

// start is one Start of tool's target through its driver, as the bench's tools/calls make it
// (unauthenticated: no caller).
func (d *startDrivers) start(tool, input string) (func(context.Context) error, error) {
	t, ok := d.set.Tool(tool)
	if !ok {
		return nil, fmt.Errorf("the bench's mapping has no tool %s", tool)
	}
	driver, ok := d.drivers[t.Engine]
	if !ok {
		return nil, fmt.Errorf("no driver for tool %s (engine %s)", tool, t.Engine)
	}
	return func(ctx context.Context) error {
		r, err := driver.Start(ctx, t.Target, adapters.StartRequest{Input: json.RawMessage(input)})
		if err == nil {
			d.b.remember(r)
		}
		return err
	}, nil
}
