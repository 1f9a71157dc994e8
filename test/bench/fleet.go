package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
	"github.com/taskgate/taskgate/internal/mcpclient"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/test/apifaults"
)

// Figure 7: a fleet of tasks on the three engines, polled by many clients, against a small read
// budget; a second run with the engines throttling a share of the reads in the middle third.
//
// The taskgate process reaches each engine through a proxy of test/apifaults, which counts the
// calls that reach the engine and, for Step Functions and Temporal, throttles the share asked of
// the reads (DescribeExecution, GetExecutionHistory, DescribeWorkflowExecution,
// GetWorkflowExecutionHistory) as the engine does; Restate's admin API has no published limit to
// imitate, so its reads (the SQL endpoint) are only counted. Its engine blocks have the figure's
// budget (-fleet-budget reads a second, a burst of one, so that the reads of any 10 s window are
// at most ten times the budget). The tasks are started through it (so it holds their first
// readings), each running a random length from a third of the run to twice and a third of it, so
// that about a third of them end during the run. Each client owns tasks of every engine and polls
// each of them in a loop of its own: half the clients wait the pollIntervalMs of each answer, half
// poll every 250 ms. Each client also listens for its tasks (fleetlisten.go).

// The engine operations the proxies count as reads, and throttle. Step Functions throttles its
// ListExecutions in a bucket of its own, and taskgate spends a budget of its own on them
// (stepfunctions.DefaultSweepBudget): they are counted apart ("sfn-list").
var (
	sfnReads      = []string{"DescribeExecution", "GetExecutionHistory"}
	sfnListings   = []string{"ListExecutions"}
	temporalReads = []string{"DescribeWorkflowExecution", "GetWorkflowExecutionHistory", "ListWorkflowExecutions"}
)

// fleetEngines are the fleet's engines, in the order of its tasks, rows and chart, and fleetTools
// the tool that starts each one's tasks.
var (
	fleetEngines = []string{"sfn", "temporal", "restate"}
	fleetTools   = map[string]string{"sfn": toolSFN, "temporal": toolEcho, "restate": toolRestate}
)

// fleetProxies are the proxies between the fleet's taskgate process and its engines.
type fleetProxies struct {
	sfn      *apifaults.StepFunctions
	temporal *apifaults.Temporal
	restate  *apifaults.RestateAdmin
}

func newFleetProxies(restateAdmin string) (*fleetProxies, error) {
	p := &fleetProxies{}
	var err error
	if p.sfn, err = apifaults.NewStepFunctions(os.Getenv("SFN_ENDPOINT")); err != nil {
		return nil, err
	}
	if p.temporal, err = apifaults.NewTemporal(os.Getenv("TEMPORAL_ADDRESS")); err != nil {
		p.sfn.Close()
		return nil, err
	}
	if p.restate, err = apifaults.NewRestateAdmin(restateAdmin); err != nil {
		p.sfn.Close()
		p.temporal.Close()
		return nil, err
	}
	return p, nil
}

func (p *fleetProxies) close() {
	p.sfn.Close()
	p.temporal.Close()
	p.restate.Close()
}

// reads counts the engine reads that reached each proxy so far.
func (p *fleetProxies) reads() map[string]int64 {
	return map[string]int64{"sfn": sumOps(p.sfn.Calls, sfnReads), "sfn-list": sumOps(p.sfn.Calls, sfnListings), "temporal": sumOps(p.temporal.Calls, temporalReads),
		"restate": p.restate.Calls(apifaults.RestateQuery)}
}

// throttled counts the engine reads each proxy throttled so far.
func (p *fleetProxies) throttled() map[string]int64 {
	return map[string]int64{"sfn": sumOps(p.sfn.Throttled, append(sfnReads, sfnListings...)), "temporal": sumOps(p.temporal.Throttled, temporalReads)}
}

// throttle makes the proxies that can throttle answer fraction of the reads as throttled.
func (p *fleetProxies) throttle(fraction float64) {
	p.sfn.Throttle(fraction, append(sfnReads, sfnListings...)...)
	p.temporal.Throttle(fraction, temporalReads...)
}

// fleetTask is one task of the fleet and what its client saw.
type fleetTask struct {
	engine  string // of fleetEngines
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
	// notified is when its client's listen stream first showed it ended (fleetlisten.go; unix
	// nanoseconds, 0: not yet): the listen and the poll loop are goroutines of their own.
	notified atomic.Int64
}

// fleetRun is what one run measured.
type fleetRun struct {
	throttle float64
	duration time.Duration
	// reads are the engine reads of each second of the run, by engine (of fleetEngines).
	reads     readSeries
	throttled map[string]int64
	// window is the throttling window, in seconds from the start of the run.
	window [2]float64
	// from is when the run started, if its ends before then are left out (zero: none is).
	from time.Time
	// listenEnds: a client that its listen told of a task's end polls it no more, and saw the
	// end then, as a client that listens does; else it polls on until a poll shows the end.
	listenEnds bool
	polls      atomic.Int64
	// answers of running tasks, those older than the task's curve allows, and their ages (s), all
	// and by engine.
	mu          sync.Mutex
	answers     int
	stale       int
	staleness   []float64
	stalenessOf map[string][]float64
	errors      int
	firstError  error
	errorTexts  map[string]int // errors by errorText
	// delays are, for the ends of the run, how long after the end its client saw it (s); late
	// counts those seen later than the task's interval plus a second (or not at all).
	delays []float64
	late   int
	// listeners is what the clients' listen streams saw.
	listeners listening
}

func (b *bench) fleetFigure(ctx context.Context) error {
	b.logf("fleet (figure 7)")
	if err := b.ensureRestate(); err != nil {
		return err
	}
	proxies, err := newFleetProxies(b.restate.admin)
	if err != nil {
		return err
	}
	defer proxies.close()
	if err := b.ensureWorker(ctx); err != nil {
		return err
	}
	set, err := benchTools()
	if err != nil {
		return err
	}
	throttles := []float64{0}
	if b.opts.fleetThrottle > 0 {
		throttles = append(throttles, b.opts.fleetThrottle)
	}
	var charted *fleetRun
	var refused error
	for _, throttle := range throttles {
		run, err := b.fleetRun(ctx, proxies, set, throttle)
		if err != nil {
			return err
		}
		b.fleetRows(run)
		charted = run
		if refused == nil {
			refused = run.listeners.refused
		}
	}
	if b.opts.fleetSVG != "" {
		if err := writeFleetChart(b.opts.fleetSVG, charted, b.opts.fleetBudget, b.opts.fleetTasks, b.opts.fleetClients); err != nil {
			return err
		}
		b.logf("  chart of the last run: %s", b.opts.fleetSVG)
	}
	n := b.opts.fleetTasks
	b.res.note(7, "%d Step Functions executions (wait and echo), %d Temporal workflows (wait and echo, on the bench's worker) and %d Restate invocations (the example WaitAndEcho), started through one taskgate process (tools/call, 16 at a time) before each run; each waits a random length from a third of the run to twice and a third of it. %d clients (2026-07-28, over HTTP) each own an equal share of every engine's tasks and poll each in a loop of its own: the even clients wait the pollIntervalMs of each answer, the odd ones poll every 250 ms. Each run lasts %s.",
		n, n, n, b.opts.fleetClients, b.opts.fleetDuration)
	b.res.note(7, "The taskgate process reaches each engine through a proxy (test/apifaults: HTTP in front of the Step Functions endpoint and of Restate's admin API, gRPC in front of the Temporal frontend), which counts the reads that reach the engine (DescribeExecution, GetExecutionHistory, ListExecutions; DescribeWorkflowExecution, GetWorkflowExecutionHistory, ListWorkflowExecutions; Restate's SQL queries, POST /query) and, in the second run, answers %.0f%% of the Step Functions and Temporal reads in the run's middle third with ThrottlingException or ResourceExhausted, as the engines do (Restate publishes no limit of its admin API: its reads are never throttled). Each engine block's read budget is %g reads a second with a burst of 1 (the direct column); reads per second are counted in 10 s windows from the start of the run, each window's reads over the time its samples lasted (the sampler wakes late on a busy machine). Step Functions throttles ListExecutions in a bucket of its own, and taskgate's sweeps spend a budget of their own on it (%g a second, a burst of %d: the direct column is the most that lets through in 10 s, a second's worth and a tenth of the burst): its row counts them, the sfn reads row the rest.",
		b.opts.fleetThrottle*100, b.opts.fleetBudget, stepfunctions.DefaultSweepBudget.ReadsPerSecond, stepfunctions.DefaultSweepBudget.Burst)
	b.res.note(7, "Client-side figures: an answer about a running task is stale when it is older (now - lastUpdatedAt) than the task's polling interval at its age (the mapping's curve: the reuse alone never serves one); staleness is that age. End to seen: from the engine's close time of an execution that ended during the run to the first answer that showed it ended; an end not seen by the end of the run counts with the time until then, and as late. Late: seen later than the task's interval plus a second, where the interval is how long the reading of the answer before was good for (from its lastUpdatedAt to the pollIntervalMs told with it: how often the engine was read for the task then); an end too close to the end of the run to be seen yet is left out. Client errors: any error answer or failed request (retryable ones included).")
	b.res.note(7, "Listeners: each client also sends one subscriptions/listen (2026-07-28, the tasks extension declared) with notifications.taskIds = its tasks, and reads its event stream for the run (again when it ends or fails: a failure counts as a client error). End to notified: from the engine's close time to the first notifications/tasks that showed the task ended; an end not notified by the end of the run counts with the time until then, and in ends not notified, unless it came less than %s before the end of the run.", notifyGrace)
	if refused != nil {
		b.res.note(7, "This build does not push: %v. The notified rows are NaN.", refused)
	}
	return nil
}

// ensureRestate connects the bench to the Restate server when -engine left it out.
func (b *bench) ensureRestate() error {
	if b.restate.admin != "" {
		return nil
	}
	var err error
	b.restate, err = restateFromEnv(b.http)
	return err
}

// fleetRun starts the fleet, polls and listens to it for the run's duration and measures it.
func (b *bench) fleetRun(ctx context.Context, proxies *fleetProxies, set *mapping.Set, throttle float64) (*fleetRun, error) {
	budget := adapters.Budget{ReadsPerSecond: b.opts.fleetBudget, Burst: 1}
	label := fmt.Sprintf("fleet-%g", throttle*100)
	c, err := b.startChild(ctx, label, childConfig{
		Budgets: map[string]adapters.Budget{"temporal": budget, "aws": budget, "restate": budget},
		Env: map[string]string{"TEMPORAL_ADDRESS": proxies.temporal.Address(), "SFN_ENDPOINT": proxies.sfn.URL(),
			"RESTATE_ADMIN_URL": proxies.restate.URL()},
	})
	if err != nil {
		return nil, err
	}
	tasks, err := b.startFleet(ctx, c)
	if err != nil {
		return nil, err
	}
	run := &fleetRun{throttle: throttle, duration: b.opts.fleetDuration, reads: newReadSeries(), throttled: map[string]int64{}}
	if throttle > 0 {
		run.window = [2]float64{run.duration.Seconds() / 3, 2 * run.duration.Seconds() / 3}
	}
	clients := make([]*mcpclient.Client, b.opts.fleetClients)
	for i := range clients {
		clients[i] = b.modern(c.endpoint())
	}
	curves := map[string]*mapping.Tool{}
	for engine, name := range fleetTools {
		curves[engine], _ = set.Tool(name)
	}
	throttledBefore := proxies.throttled()

	runCtx, stop := context.WithTimeout(ctx, run.duration)
	defer stop()
	t0 := time.Now()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		run.reads.sample(runCtx, proxies.reads, t0)
	}()
	if throttle > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sleep(runCtx, time.Duration(run.window[0]*float64(time.Second)))
			proxies.throttle(throttle)
			sleep(runCtx, time.Duration((run.window[1]-run.window[0])*float64(time.Second)))
			proxies.throttle(0)
		}()
	}
	for i, own := range tasksByClient(tasks, len(clients)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run.listeners.listen(runCtx, clients[i], own, run.countError)
		}()
	}
	for i, task := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run.poll(runCtx, clients[i%len(clients)], task, curves[task.engine])
		}()
	}
	wg.Wait()
	end := time.Now()
	proxies.throttle(0)
	for engine, n := range proxies.throttled() {
		run.throttled[engine] = n - throttledBefore[engine]
	}
	if err := b.endsSeen(ctx, run, tasks, end); err != nil {
		return nil, err
	}
	b.stopChild(c)
	b.cleanup()
	b.logf("  run with %.0f%% of reads throttled: %d polls, %d answers of running tasks (%d stale), %d errors, %d ends (%d late, %s); reads/s max over 10 s: sfn %.1f, temporal %.1f, restate %.1f",
		throttle*100, run.polls.Load(), run.answers, run.stale, run.errors, len(run.delays), run.late, run.listeners.summary(),
		run.reads.maxWindow("sfn", 10), run.reads.maxWindow("temporal", 10), run.reads.maxWindow("restate", 10))
	if run.firstError != nil {
		b.logf("  first client error: %v", run.firstError)
	}
	return run, nil
}

// countError counts a client error, keeping the first, and its text (errorTexts).
func (run *fleetRun) countError(err error) {
	run.mu.Lock()
	defer run.mu.Unlock()
	run.errors++
	if run.firstError == nil {
		run.firstError = err
	}
	if run.errorTexts == nil {
		run.errorTexts = map[string]int{}
	}
	run.errorTexts[errorText(err)]++
}

// errorIDs are the parts of an error's text that differ between errors of one kind.
var errorIDs = regexp.MustCompile(`error id [0-9a-f]+|retry in [0-9.hms]+|"errorId":"[0-9a-f]+"|"retryAfterMs":[0-9]+|"id":[0-9]+`)

// errorText is err's text with what differs between errors of one kind left out, so that errors of
// a kind count together.
func errorText(err error) string { return errorIDs.ReplaceAllString(err.Error(), "…") }

// startFleet starts the fleet's tasks through c, 16 at a time (a block of -fleet-tasks per engine,
// in the order of fleetEngines), and shares them out to the clients: task i is client i mod
// clients's, which follows pollIntervalMs when it is even.
func (b *bench) startFleet(ctx context.Context, c *child) ([]*fleetTask, error) {
	n := b.opts.fleetTasks
	tasks := make([]*fleetTask, len(fleetEngines)*n)
	for i := range tasks {
		d := b.opts.fleetDuration
		length := d/3 + time.Duration(rand.Float64()*float64(2*d))
		tasks[i] = &fleetTask{engine: fleetEngines[i/n], length: length.Round(time.Second),
			follows: (i%b.opts.fleetClients)%2 == 0}
	}
	client := b.modern(c.endpoint())
	t0, retriedBefore := time.Now(), retried.Load()
	err := parallel(len(tasks), 16, func(i int) error {
		task := tasks[i]
		id, err := b.start(ctx, client, fleetTools[task.engine], map[string]any{"seconds": int(task.length.Seconds()), "text": "fleet"})
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

// tasksByClient are the tasks of each of n clients: task i is client i mod n's.
func tasksByClient(tasks []*fleetTask, n int) [][]*fleetTask {
	own := make([][]*fleetTask, n)
	for i, task := range tasks {
		own[i%n] = append(own[i%n], task)
	}
	return own
}

// poll is one task's client loop, until the task is seen ended or the run is over.
func (run *fleetRun) poll(ctx context.Context, c *mcpclient.Client, task *fleetTask, tool *mapping.Tool) {
	next := time.Duration(rand.Int64N(int64(time.Second)))
	for {
		sleep(ctx, next)
		if ctx.Err() != nil {
			return
		}
		if at := task.notified.Load(); run.listenEnds && at != 0 {
			task.seen = time.Unix(0, at)
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
			run.countError(err)
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
		if run.stalenessOf == nil {
			run.stalenessOf = map[string][]float64{}
		}
		run.stalenessOf[task.engine] = append(run.stalenessOf[task.engine], age)
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

// readSeries are engine reads counted second by second, by engine, and how long each of those
// seconds lasted: on a busy machine the sampler wakes late, and its "second" holds more reads.
type readSeries struct {
	perSecond map[string][]int
	spans     []float64 // (s)
}

func newReadSeries() readSeries { return readSeries{perSecond: map[string][]int{}} }

// sample appends the reads that count (a running total by engine) grew by in each second from t0,
// until ctx ends.
func (r *readSeries) sample(ctx context.Context, count func() map[string]int64, t0 time.Time) {
	last, at := count(), time.Now()
	for s := 1; ; s++ {
		sleep(ctx, time.Until(t0.Add(time.Duration(s)*time.Second)))
		if ctx.Err() != nil {
			return
		}
		now := time.Now()
		for engine, n := range count() {
			r.perSecond[engine] = append(r.perSecond[engine], int(n-last[engine]))
			last[engine] = n
		}
		r.spans, at = append(r.spans, now.Sub(at).Seconds()), now
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
// the run did (since run.from), and how long their clients took to see it and to be told.
func (b *bench) endsSeen(ctx context.Context, run *fleetRun, tasks []*fleetTask, end time.Time) error {
	var mu sync.Mutex
	return parallel(len(tasks), 16, func(i int) error {
		task := tasks[i]
		if task.started.Add(task.length).After(end) {
			return nil
		}
		closed, err := b.closedAt(ctx, task)
		if err != nil || closed.IsZero() || closed.After(end) || closed.Before(run.from) {
			return err
		}
		run.listeners.record(task, closed, end)
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
	if task.engine == "restate" {
		return b.restateCompletedAt(ctx, invocationOf(task.ref))
	}
	if task.engine == "sfn" {
		d, err := b.sc.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(task.ref.ID)})
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

// maxWindow is the most reads per second of engine over the whole windows of w samples, each
// window's reads over the time it lasted.
func (r readSeries) maxWindow(engine string, w int) float64 {
	most := 0.0
	counts := r.perSecond[engine]
	for i := 0; i+w <= len(counts); i += w {
		most = max(most, rate(counts[i:i+w], r.spans[i:i+w]))
	}
	return most
}

// meanWindow is the mean reads per second of engine over the whole windows of w samples; NaN when
// there is none.
func (r readSeries) meanWindow(engine string, w int) float64 {
	counts := r.perSecond[engine]
	whole := len(counts) / w * w
	if whole == 0 {
		return math.NaN()
	}
	return rate(counts[:whole], r.spans[:whole])
}

// rate is counts over the seconds of spans.
func rate(counts []int, spans []float64) float64 {
	n, d := 0, 0.0
	for i, c := range counts {
		n, d = n+c, d+spans[i]
	}
	return float64(n) / d
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
	for _, engine := range fleetEngines {
		add(engine+" engine reads per second, max over 10 s windows", "reads/s", budget, run.reads.maxWindow(engine, 10))
	}
	lists := stepfunctions.DefaultSweepBudget
	add("sfn ListExecutions per second, max over 10 s windows", "reads/s", lists.ReadsPerSecond+float64(lists.Burst)/10, run.reads.maxWindow("sfn-list", 10))
	add("client errors", unitErrors, 0, float64(run.errors))
	share := math.NaN()
	if run.answers > 0 {
		share = float64(run.stale) / float64(run.answers)
	}
	add("stale answers, share", unitShare, none, share)
	add("staleness p95 (s)", "s", none, p95(run.staleness))
	for _, engine := range fleetEngines {
		add(engine+" staleness p95 (s)", "s", none, p95(run.stalenessOf[engine]))
	}
	add("end to seen terminal p95 (s)", "s", none, p95(run.delays))
	add("ends seen later than the task's interval + 1 s", unitErrors, 0, float64(run.late))
	add("ends during the run", "executions", none, float64(len(run.delays)))
	notified, missed := none, none
	if run.listeners.refused == nil {
		notified, missed = p95(run.listeners.delays), float64(run.listeners.missed)
	}
	add("end to notified p95 (s)", "s", none, notified)
	for _, engine := range fleetEngines {
		if notified = none; run.listeners.refused == nil {
			notified = p95(run.listeners.delaysOf[engine])
		}
		add(engine+" end to notified p95 (s)", "s", none, notified)
	}
	add("ends not notified", unitErrors, 0, missed)
	add("client polls per second", "polls/s", none, float64(run.polls.Load())/run.duration.Seconds())
	if run.throttle > 0 {
		add("sfn engine reads throttled by the proxy", unitCount, none, float64(run.throttled["sfn"]))
		add("temporal engine reads throttled by the proxy", unitCount, none, float64(run.throttled["temporal"]))
	}
}
