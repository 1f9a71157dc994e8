package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/internal/mcpclient"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/test/apifaults"
)

// Figure 7: a fleet of tasks on both engines, polled by many clients, against a small read budget;
// a second run with the engines throttling a share of the reads in the middle third.
//
// The taskgate process reaches each engine through a proxy of test/apifaults, which counts the
// calls that reach the engine and throttles the share asked of the reads (DescribeExecution,
// GetExecutionHistory, DescribeWorkflowExecution, GetWorkflowExecutionHistory) as the engine
// does. Its engine blocks have the figure's budget (-fleet-budget reads a second, a burst of one,
// so that the reads of any 10 s window are at most ten times the budget). The tasks are started
// through it (so it holds their first readings), each running a random length from a third of the
// run to twice and a third of it, so that about a third of them end during the run. Each client
// owns tasks of both engines and polls each of them in a loop of its own: half the clients wait
// the pollIntervalMs of each answer, half poll every 250 ms.

// The engine operations the proxies count as reads, and throttle.
var (
	sfnReads      = []string{"DescribeExecution", "GetExecutionHistory", "ListExecutions"}
	temporalReads = []string{"DescribeWorkflowExecution", "GetWorkflowExecutionHistory", "ListWorkflowExecutions"}
)

// fleetTask is one task of the fleet and what its client saw.
type fleetTask struct {
	engine  string // "sfn" or "temporal"
	id      string
	ref     adapters.Ref
	started time.Time
	length  time.Duration
	follows bool // its client follows pollIntervalMs
	// seen is when its client first saw it ended; interval how long the reading of the answer
	// before was good for (from lastUpdatedAt to the pollIntervalMs told): how often the task was
	// read then.
	seen     time.Time
	interval time.Duration
}

// fleetRun is what one run measured.
type fleetRun struct {
	throttle float64
	duration time.Duration
	// reads are the engine reads per second of the run, by engine ("sfn", "temporal").
	reads     map[string][]int
	throttled map[string]int64
	// window is the throttling window, in seconds from the start of the run.
	window [2]float64
	polls  atomic.Int64
	// answers of running tasks, those older than the task's curve allows, and their ages (s).
	mu         sync.Mutex
	answers    int
	stale      int
	staleness  []float64
	errors     int
	firstError error
	// delays are, for the ends of the run, how long after the end its client saw it (s); late
	// counts those seen later than the task's interval plus a second (or not at all).
	delays []float64
	late   int
}

func (b *bench) fleetFigure(ctx context.Context) error {
	b.logf("fleet (figure 7)")
	sp, err := apifaults.NewStepFunctions(os.Getenv("SFN_ENDPOINT"))
	if err != nil {
		return err
	}
	defer sp.Close()
	tp, err := apifaults.NewTemporal(os.Getenv("TEMPORAL_ADDRESS"))
	if err != nil {
		return err
	}
	defer tp.Close()
	if err := b.ensureWorker(ctx); err != nil {
		return err
	}
	set, err := mapping.Parse("test/bench/tools.yaml", toolsYAML)
	if err != nil {
		return err
	}
	throttles := []float64{0}
	if b.opts.fleetThrottle > 0 {
		throttles = append(throttles, b.opts.fleetThrottle)
	}
	var charted *fleetRun
	for _, throttle := range throttles {
		run, err := b.fleetRun(ctx, sp, tp, set, throttle)
		if err != nil {
			return err
		}
		b.fleetRows(run)
		charted = run
	}
	if b.opts.fleetSVG != "" {
		if err := writeFleetChart(b.opts.fleetSVG, charted, b.opts.fleetBudget, b.opts.fleetTasks, b.opts.fleetClients); err != nil {
			return err
		}
		b.logf("  chart of the last run: %s", b.opts.fleetSVG)
	}
	b.res.note(7, "%d Step Functions executions (wait and echo) and %d Temporal workflows (wait and echo, on the bench's worker), started through one taskgate process (tools/call, 16 at a time) before each run; each waits a random length from a third of the run to twice and a third of it. %d clients (2026-07-28, over HTTP) each own an equal share of both engines' tasks and poll each in a loop of its own: the even clients wait the pollIntervalMs of each answer, the odd ones poll every 250 ms. Each run lasts %s.",
		b.opts.fleetTasks, b.opts.fleetTasks, b.opts.fleetClients, b.opts.fleetDuration)
	b.res.note(7, "The taskgate process reaches each engine through a proxy (test/apifaults: HTTP in front of the Step Functions endpoint, gRPC in front of the Temporal frontend), which counts the reads that reach the engine (DescribeExecution, GetExecutionHistory, ListExecutions; DescribeWorkflowExecution, GetWorkflowExecutionHistory, ListWorkflowExecutions) and, in the second run, answers %.0f%% of them in the run's middle third with ThrottlingException or ResourceExhausted, as the engines do. Each engine block's read budget is %g reads a second with a burst of 1 (the direct column); reads per second are counted in 10 s windows from the start of the run.",
		b.opts.fleetThrottle*100, b.opts.fleetBudget)
	b.res.note(7, "Client-side figures: an answer about a running task is stale when it is older (now - lastUpdatedAt) than the task's polling interval at its age (the mapping's curve: the reuse alone never serves one); staleness is that age. End to seen: from the engine's close time of an execution that ended during the run to the first answer that showed it ended; an end not seen by the end of the run counts with the time until then, and as late. Late: seen later than the task's interval plus a second, where the interval is how long the reading of the answer before was good for (from its lastUpdatedAt to the pollIntervalMs told with it: how often the engine was read for the task then); an end too close to the end of the run to be seen yet is left out. Client errors: any error answer or failed request (retryable ones included).")
	return nil
}

// fleetRun starts the fleet, polls it for the run's duration and measures it.
func (b *bench) fleetRun(ctx context.Context, sp *apifaults.StepFunctions, tp *apifaults.Temporal, set *mapping.Set, throttle float64) (*fleetRun, error) {
	budget := adapters.Budget{ReadsPerSecond: b.opts.fleetBudget, Burst: 1}
	label := fmt.Sprintf("fleet-%g", throttle*100)
	c, err := b.startChild(ctx, label, childConfig{
		Budgets: map[string]adapters.Budget{"temporal": budget, "aws": budget},
		Env:     map[string]string{"TEMPORAL_ADDRESS": tp.Address(), "SFN_ENDPOINT": sp.URL()},
	})
	if err != nil {
		return nil, err
	}
	tasks, err := b.startFleet(ctx, c)
	if err != nil {
		return nil, err
	}
	run := &fleetRun{throttle: throttle, duration: b.opts.fleetDuration, reads: map[string][]int{}, throttled: map[string]int64{}}
	if throttle > 0 {
		run.window = [2]float64{run.duration.Seconds() / 3, 2 * run.duration.Seconds() / 3}
	}
	clients := make([]*mcpclient.Client, b.opts.fleetClients)
	for i := range clients {
		clients[i] = b.modern(c.endpoint())
	}
	curves := map[string]*mapping.Tool{}
	for _, name := range []string{toolSFN, toolEcho} {
		curves[name], _ = set.Tool(name)
	}
	throttledBefore := map[string]int64{"sfn": sumOps(sp.Throttled, sfnReads), "temporal": sumOps(tp.Throttled, temporalReads)}

	runCtx, stop := context.WithTimeout(ctx, run.duration)
	defer stop()
	t0 := time.Now()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.sampleReads(runCtx, run, sp, tp, t0)
	}()
	if throttle > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sleep(runCtx, time.Duration(run.window[0]*float64(time.Second)))
			sp.Throttle(throttle, sfnReads...)
			tp.Throttle(throttle, temporalReads...)
			sleep(runCtx, time.Duration((run.window[1]-run.window[0])*float64(time.Second)))
			sp.Throttle(0)
			tp.Throttle(0)
		}()
	}
	for i, task := range tasks {
		tool := map[string]*mapping.Tool{"sfn": curves[toolSFN], "temporal": curves[toolEcho]}[task.engine]
		wg.Add(1)
		go func() {
			defer wg.Done()
			run.poll(runCtx, clients[i%len(clients)], task, tool)
		}()
	}
	wg.Wait()
	end := time.Now()
	sp.Throttle(0)
	tp.Throttle(0)
	run.throttled["sfn"] = sumOps(sp.Throttled, sfnReads) - throttledBefore["sfn"]
	run.throttled["temporal"] = sumOps(tp.Throttled, temporalReads) - throttledBefore["temporal"]
	if err := b.endsSeen(ctx, run, tasks, end); err != nil {
		return nil, err
	}
	b.stopChild(c)
	b.cleanup()
	b.logf("  run with %.0f%% of reads throttled: %d polls, %d answers of running tasks (%d stale), %d errors, %d ends (%d late); reads/s max over 10 s: sfn %.1f, temporal %.1f",
		throttle*100, run.polls.Load(), run.answers, run.stale, run.errors, len(run.delays), run.late,
		maxWindow(run.reads["sfn"], 10), maxWindow(run.reads["temporal"], 10))
	if run.firstError != nil {
		b.logf("  first client error: %v", run.firstError)
	}
	return run, nil
}

// startFleet starts the fleet's tasks through c, 16 at a time (the first half on Step Functions,
// the second on Temporal), and shares them out to the clients: task i is client i mod clients's,
// which follows pollIntervalMs when it is even.
func (b *bench) startFleet(ctx context.Context, c *child) ([]*fleetTask, error) {
	n := b.opts.fleetTasks
	tasks := make([]*fleetTask, 2*n)
	for i := range tasks {
		d := b.opts.fleetDuration
		length := d/3 + time.Duration(rand.Float64()*float64(2*d))
		tasks[i] = &fleetTask{engine: []string{"sfn", "temporal"}[i/n], length: length.Round(time.Second),
			follows: (i%b.opts.fleetClients)%2 == 0}
	}
	client := b.modern(c.endpoint())
	t0, retriedBefore := time.Now(), retried.Load()
	err := parallel(len(tasks), 16, func(i int) error {
		task := tasks[i]
		tool := map[string]string{"sfn": toolSFN, "temporal": toolEcho}[task.engine]
		id, err := b.start(ctx, client, tool, map[string]any{"seconds": int(task.length.Seconds()), "text": "fleet"})
		if err != nil {
			return fmt.Errorf("starting the fleet's task %d: %w", i, err)
		}
		task.id, task.started = id, time.Now()
		task.ref, err = b.ref(id)
		return err
	})
	if err != nil {
		return nil, err
	}
	b.logf("  started %d tasks on each engine in %s (%d requests sent again, marked retryable)", n, time.Since(t0).Round(time.Millisecond), retried.Load()-retriedBefore)
	return tasks, nil
}

// poll is one task's client loop, until the task is seen ended or the run is over.
func (run *fleetRun) poll(ctx context.Context, c *mcpclient.Client, task *fleetTask, tool *mapping.Tool) {
	next := time.Duration(rand.Int64N(int64(time.Second)))
	for {
		sleep(ctx, next)
		if ctx.Err() != nil {
			return
		}
		// Once: the client's loop is its retry, and the figure counts every error it saw.
		a, err := callOnce(ctx, c, "tasks/get", map[string]any{"taskId": task.id})
		if ctx.Err() != nil {
			return
		}
		run.polls.Add(1)
		now := time.Now()
		next = 250 * time.Millisecond
		if err != nil {
			run.mu.Lock()
			run.errors++
			if run.firstError == nil {
				run.firstError = err
			}
			run.mu.Unlock()
			continue
		}
		if a.Status != "working" && a.Status != "input_required" {
			task.seen = now
			return
		}
		age := now.Sub(a.LastUpdatedAt).Seconds()
		stale := age > tool.PollIntervalAt(now.Sub(a.CreatedAt)).Seconds()
		run.mu.Lock()
		run.answers++
		run.staleness = append(run.staleness, age)
		if stale {
			run.stale++
		}
		run.mu.Unlock()
		told := time.Duration(a.PollIntervalMs) * time.Millisecond
		task.interval = now.Add(told).Sub(a.LastUpdatedAt)
		if task.follows {
			next = told
		}
	}
}

// sampleReads counts the engine reads the proxies passed, second by second, until ctx ends.
func (b *bench) sampleReads(ctx context.Context, run *fleetRun, sp *apifaults.StepFunctions, tp *apifaults.Temporal, t0 time.Time) {
	last := map[string]int64{"sfn": sumOps(sp.Calls, sfnReads), "temporal": sumOps(tp.Calls, temporalReads)}
	for s := 1; ; s++ {
		sleep(ctx, time.Until(t0.Add(time.Duration(s)*time.Second)))
		if ctx.Err() != nil {
			return
		}
		for engine, now := range map[string]int64{"sfn": sumOps(sp.Calls, sfnReads), "temporal": sumOps(tp.Calls, temporalReads)} {
			run.reads[engine] = append(run.reads[engine], int(now-last[engine]))
			last[engine] = now
		}
	}
}

func sumOps(count func(string) int64, ops []string) int64 {
	var n int64
	for _, op := range ops {
		n += count(op)
	}
	return n
}

// endsSeen reads, directly from the engines, when the tasks that could have ended by the end of
// the run did, and how long their clients took to see it.
func (b *bench) endsSeen(ctx context.Context, run *fleetRun, tasks []*fleetTask, end time.Time) error {
	var mu sync.Mutex
	return parallel(len(tasks), 16, func(i int) error {
		task := tasks[i]
		if task.started.Add(task.length).After(end) {
			return nil
		}
		closed, err := b.closedAt(ctx, task)
		if err != nil || closed.IsZero() || closed.After(end) {
			return err
		}
		seen, late := task.seen, false
		if seen.IsZero() {
			seen, late = end, true
		}
		delay := seen.Sub(closed)
		if late && delay <= task.interval+time.Second {
			return nil // too close to the end of the run to be seen yet
		}
		late = late || delay > task.interval+time.Second
		mu.Lock()
		defer mu.Unlock()
		run.delays = append(run.delays, delay.Seconds())
		if late {
			run.late++
		}
		return nil
	})
}

// closedAt is when the task's execution ended, as its engine says; zero while it runs.
func (b *bench) closedAt(ctx context.Context, task *fleetTask) (time.Time, error) {
	if task.engine == "sfn" {
		d, err := b.se.Client().DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(task.ref.ID)})
		if err != nil {
			return time.Time{}, fmt.Errorf("reading when %s ended: %w", task.ref.ID, err)
		}
		return aws.ToTime(d.StopDate), nil
	}
	id, run := workflowOf(task.ref)
	d, err := b.tc.WorkflowService().DescribeWorkflowExecution(ctx, &workflowservice.DescribeWorkflowExecutionRequest{
		Namespace: namespace(), Execution: &commonpb.WorkflowExecution{WorkflowId: id, RunId: run}})
	if err != nil {
		return time.Time{}, fmt.Errorf("reading when %s ended: %w", task.ref, err)
	}
	if ct := d.GetWorkflowExecutionInfo().GetCloseTime(); ct != nil {
		return ct.AsTime(), nil
	}
	return time.Time{}, nil
}

// maxWindow is the most reads per second over the whole windows of w seconds of perSecond.
func maxWindow(perSecond []int, w int) float64 {
	most := 0
	for i := 0; i+w <= len(perSecond); i += w {
		sum := 0
		for _, n := range perSecond[i : i+w] {
			sum += n
		}
		most = max(most, sum)
	}
	return float64(most) / float64(w)
}

// p95 is the 95th percentile (nearest rank) of v; NaN when empty.
func p95(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[min(len(s)-1, int(math.Ceil(0.95*float64(len(s))))-1)]
}

// fleetRows records a run's rows, named as the issue names them (the throttled run's with the
// share throttled after them).
func (b *bench) fleetRows(run *fleetRun) {
	suffix := ""
	if run.throttle > 0 {
		suffix = fmt.Sprintf(", %.0f%% of reads throttled", run.throttle*100)
	}
	budget, none := b.opts.fleetBudget, math.NaN()
	add := func(name, unit string, direct, taskgate float64) { b.res.add(7, name+suffix, unit, direct, taskgate) }
	add("sfn engine reads per second, max over 10 s windows", "reads/s", budget, maxWindow(run.reads["sfn"], 10))
	add("temporal engine reads per second, max over 10 s windows", "reads/s", budget, maxWindow(run.reads["temporal"], 10))
	add("client errors", unitErrors, 0, float64(run.errors))
	share := math.NaN()
	if run.answers > 0 {
		share = float64(run.stale) / float64(run.answers)
	}
	add("stale answers, share", unitShare, none, share)
	add("staleness p95 (s)", "s", none, p95(run.staleness))
	add("end to seen terminal p95 (s)", "s", none, p95(run.delays))
	add("ends seen later than the task's interval + 1 s", unitErrors, 0, float64(run.late))
	add("ends during the run", "executions", none, float64(len(run.delays)))
	add("client polls per second", "polls/s", none, float64(run.polls.Load())/run.duration.Seconds())
	if run.throttle > 0 {
		add("sfn engine reads throttled by the proxy", unitCount, none, float64(run.throttled["sfn"]))
		add("temporal engine reads throttled by the proxy", unitCount, none, float64(run.throttled["temporal"]))
	}
}
