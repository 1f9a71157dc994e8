package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	restatesdk "github.com/restatedev/sdk-go"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/restate"
	restateexamples "github.com/taskgate/taskgate/examples/restate"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/internal/mcpclient"
	"github.com/taskgate/taskgate/mapping"
)

// Figure 9: the platform a team runs. -fleet-platform-replicas taskgate processes (each as
// `serve --replicas N`: a share of every block's budget) serve one mapping behind a round-robin
// balancer (balancer.go: each request to the next replica, a listen's stream on the replica it
// opened on). The mapping has one engine block per engine, each with -fleet-platform-targets
// tools of targets of their own: state machines on the local Step Functions endpoint (copies of
// wait and echo), Temporal workflow types (WaitAndEcho registered under as many names on the
// bench's worker) and handlers of a Restate service the bench serves (BenchPlatform); and
// -fleet-platform-tasks tasks per engine spread evenly over its targets, each running a random
// length as the fleet's do. -fleet-platform-clients clients each own tasks of every engine, poll
// them and listen for their ends, as the fleet's (fleet.go, fleetlisten.go), through the balancer.
// Every replica reaches each engine through the same counting proxy (test/apifaults), so the reads
// of all replicas count together against the deployment's budget (-fleet-platform-budget per
// block, a burst of one per replica); the Step Functions proxy enforces the listing quota of the
// smaller regions (ListExecutions: a bucket of 100 refilled at 2 a second, ThrottlingException
// past it).
//
// The runs: the main one, fault-free, with Step Functions' event source when there is one
// (platformevents.go); Step Functions alone without it, when the main run had it; the main run
// again with the proxies throttling a share of the reads in its middle third; and Temporal alone
// with the same tasks over each of -fleet-platform-scale-targets workflow types, for how the
// engine reads grow with the targets.

const figPlatform = 9

// platformOptions are the fleet-platform figure's flags.
type platformOptions struct {
	replicas, targets, tasks, clients int
	budget, throttle                  float64
	// listRate and listBurst are the listing quota the Step Functions proxy enforces.
	listRate  float64
	listBurst int
	// duration is each run's length but the scale runs'; scaleDuration theirs.
	duration, scaleDuration time.Duration
	scaleTargets            []int
	scaleTargetsFlag        string
	// events is auto, on or off; eventsTopic a topic ARN provisioned outside the bench.
	events, eventsTopic string
}

func platformFlags(fs *flag.FlagSet, o *platformOptions) {
	fs.IntVar(&o.replicas, "fleet-platform-replicas", 3, "taskgate processes behind the fleet-platform figure's balancer (each serves with --replicas of this)")
	fs.IntVar(&o.targets, "fleet-platform-targets", 20, "targets (tools) on each engine in the fleet-platform figure")
	fs.IntVar(&o.tasks, "fleet-platform-tasks", 1000, "tasks on each engine in the fleet-platform figure, spread evenly over its targets")
	fs.IntVar(&o.clients, "fleet-platform-clients", 200, "clients of the fleet-platform figure (half follow pollIntervalMs, half poll every 250 ms; each listens)")
	fs.Float64Var(&o.budget, "fleet-platform-budget", 10, "read budget of each engine block of the fleet-platform figure, for the whole deployment (reads a second)")
	fs.Float64Var(&o.throttle, "fleet-platform-throttle", 0.2, "share of engine reads the proxies throttle in the middle third of the fleet-platform figure's throttled run (0: no such run)")
	fs.Float64Var(&o.listRate, "fleet-platform-list-rate", 2, "ListExecutions a second the Step Functions proxy allows (its quota's refill; 0: no quota)")
	fs.IntVar(&o.listBurst, "fleet-platform-list-burst", 100, "the Step Functions proxy's ListExecutions bucket")
	fs.DurationVar(&o.duration, "fleet-platform-duration", 90*time.Second, "length of each run of the fleet-platform figure but the scale runs")
	fs.DurationVar(&o.scaleDuration, "fleet-platform-scale-duration", 40*time.Second, "length of each scale run of the fleet-platform figure (at least 10s)")
	fs.StringVar(&o.scaleTargetsFlag, "fleet-platform-scale-targets", "1,10,50", "Temporal workflow types the scale runs of the fleet-platform figure spread their tasks over")
	fs.StringVar(&o.events, "fleet-platform-events", "auto", "Step Functions' event source in the fleet-platform figure: auto (when this build provisions one or -fleet-platform-events-topic names one), on (fail without), off")
	fs.StringVar(&o.eventsTopic, "fleet-platform-events-topic", "", "the SNS topic ARN of a Step Functions event source provisioned outside the bench")
}

// platformShort are the smoke sizes of -short.
func platformShort(o *platformOptions) map[string]func() {
	return map[string]func(){
		"fleet-platform-targets": func() { o.targets = 3 }, "fleet-platform-tasks": func() { o.tasks = 24 },
		"fleet-platform-clients": func() { o.clients = 6 }, "fleet-platform-duration": func() { o.duration = 30 * time.Second },
		"fleet-platform-scale-duration": func() { o.scaleDuration = 20 * time.Second },
		"fleet-platform-scale-targets":  func() { o.scaleTargetsFlag = "1,3" },
	}
}

func (o *platformOptions) check() error {
	var err error
	if o.scaleTargets, err = ints(o.scaleTargetsFlag); err != nil {
		return fmt.Errorf("-fleet-platform-scale-targets: %w", err)
	}
	switch {
	case o.replicas < 1 || o.replicas > 64 || o.targets < 1 || o.tasks < 1 || o.clients < 1:
		return fmt.Errorf("-fleet-platform-replicas (at most 64), -targets, -tasks and -clients must be at least 1")
	case o.budget <= 0 || o.throttle < 0 || o.throttle > 1 || o.listRate < 0 || o.listBurst < 1:
		return fmt.Errorf("-fleet-platform-budget must be positive, -throttle from 0 to 1, -list-rate not negative, -list-burst at least 1")
	case o.duration < 30*time.Second || o.scaleDuration < 10*time.Second:
		return fmt.Errorf("-fleet-platform-duration must be at least 30s, -fleet-platform-scale-duration at least 10s (one window of the reads per second)")
	case !slices.Contains([]string{"auto", "on", "off"}, o.events):
		return fmt.Errorf("-fleet-platform-events %q: want auto, on or off", o.events)
	}
	return nil
}

// workflowTypes is how many names the bench's worker registers its platform workflow under.
func (o *platformOptions) workflowTypes() int { return max(o.targets, slices.Max(o.scaleTargets)) }

// The figure's targets, by index.
func platformStateMachine(i int) string { return fmt.Sprintf("taskgate-bench-platform-%02d", i) }
func platformWorkflowType(i int) string { return fmt.Sprintf("BenchPlatform%02d", i) }
func platformHandler(i int) string      { return fmt.Sprintf("run%02d", i) }
func platformTool(engine string, i int) string {
	return fmt.Sprintf("platform_%s_%02d", engine, i)
}

// platformService is the Restate service whose handlers are the figure's Restate targets.
const platformService = "BenchPlatform"

// platformBlocks are the engine blocks of the figure's mapping, by engine (of fleetEngines).
var platformBlocks = map[string]string{"sfn": "aws", "temporal": "temporal", "restate": "restate"}

// registerPlatformWorkflows registers WaitAndEcho under the figure's n workflow type names.
func registerPlatformWorkflows(w worker.Worker, n int) {
	for i := range n {
		w.RegisterWorkflowWithOptions(temporalexamples.WaitAndEcho, workflow.RegisterOptions{Name: platformWorkflowType(i)})
	}
}

// platformSpec is one run of the figure.
type platformSpec struct {
	label   string
	targets map[string]int // the engines (of fleetEngines) of the run, and their targets
	events  string         // the topic ARN of Step Functions' event source ("": none)
	// throttle is the share of reads throttled in the middle third.
	throttle float64
	duration time.Duration
	// lengths: each task runs from lengths/3 to 7 lengths/3.
	lengths time.Duration
	// unread: the balancer keeps the latencies of the polls of tasks their replica had not read.
	unread bool
}

// platformRun is what one run measured.
type platformRun struct {
	*fleetRun
	spec     platformSpec
	unread   []float64            // latencies of polls of unread tasks (s)
	unreadOf map[string][]float64 // the same, by engine
	// limited counts the ListExecutions the proxy's listing quota refused.
	limited int64
}

func (b *bench) fleetPlatformFigure(ctx context.Context) error {
	o := b.opts.platform
	b.logf("fleet platform (figure 9)")
	if err := b.ensureRestate(); err != nil {
		return err
	}
	if err := b.ensureWorker(ctx); err != nil {
		return err
	}
	stopRestate, err := b.servePlatformRestate(ctx, o.targets)
	if err != nil {
		return err
	}
	defer stopRestate()
	arns, err := b.ensurePlatformStateMachines(ctx, o.targets)
	if err != nil {
		return err
	}
	proxies, err := newFleetProxies(b.restate.admin)
	if err != nil {
		return err
	}
	defer proxies.close()
	proxies.sfn.Limit(o.listRate, o.listBurst, sfnListings...)
	topic, removeEvents, err := b.sfnEventSource(ctx, os.Getenv("SFN_ENDPOINT"))
	if err != nil {
		return err
	}
	if removeEvents != nil {
		defer func() {
			if err := removeEvents(context.WithoutCancel(ctx)); err != nil {
				b.logf("  removing the Step Functions event source: %v", err)
			}
		}()
	}
	every := map[string]int{"sfn": o.targets, "temporal": o.targets, "restate": o.targets}
	run := func(spec platformSpec) (*platformRun, error) {
		return b.platformRun(ctx, proxies, arns, spec)
	}
	main, err := run(platformSpec{label: "main", targets: every, events: topic, duration: o.duration, lengths: o.duration, unread: true})
	if err != nil {
		return err
	}
	runs := []*platformRun{main}
	plain := main // Step Functions without its event source
	if topic != "" {
		if plain, err = run(platformSpec{label: "sfn-no-events", targets: map[string]int{"sfn": o.targets}, duration: o.duration, lengths: o.duration}); err != nil {
			return err
		}
		runs = append(runs, plain)
	}
	var throttled *platformRun
	if o.throttle > 0 {
		if throttled, err = run(platformSpec{label: "throttled", targets: every, events: topic, throttle: o.throttle, duration: o.duration, lengths: o.duration}); err != nil {
			return err
		}
		runs = append(runs, throttled)
	}
	// The same tasks over T targets: their lengths are the main run's, so that their ends (an
	// outcome read each, two on Temporal) weigh as in it, and the listings show.
	scale := map[int]*platformRun{}
	for _, t := range o.scaleTargets {
		r, err := run(platformSpec{label: fmt.Sprintf("temporal-%d", t), targets: map[string]int{"temporal": t}, duration: o.scaleDuration, lengths: o.duration})
		if err != nil {
			return err
		}
		scale[t] = r
		runs = append(runs, r)
	}
	b.platformRows(main, plain, throttled, scale, runs, topic)
	return nil
}

// platformRun starts the run's replicas, balancer and tasks, polls and listens to them for the
// run's duration through the balancer, and measures it.
func (b *bench) platformRun(ctx context.Context, proxies *fleetProxies, arns []string, spec platformSpec) (*platformRun, error) {
	o := b.opts.platform
	b.logf("  run %s: %s", spec.label, describeTargets(spec))
	src := b.platformMapping(spec, arns)
	set, err := mapping.Parse("fleet-platform.yaml", []byte(src))
	if err != nil {
		return nil, fmt.Errorf("the fleet-platform mapping: %w\n%s", err, src)
	}
	budgets := map[string]adapters.Budget{}
	for engine := range spec.targets {
		budgets[platformBlocks[engine]] = adapters.Budget{ReadsPerSecond: o.budget, Burst: 1}
	}
	cfg := childConfig{Mapping: src, Replicas: o.replicas, Budgets: budgets,
		Env: map[string]string{"TEMPORAL_ADDRESS": proxies.temporal.Address(), "SFN_ENDPOINT": proxies.sfn.URL(), "RESTATE_ADMIN_URL": proxies.restate.URL()}}
	replicas := make([]*child, o.replicas)
	endpoints := make([]string, o.replicas)
	for i := range replicas {
		if replicas[i], err = b.startChild(ctx, fmt.Sprintf("platform-%s-%d", spec.label, i), cfg); err != nil {
			return nil, err
		}
		endpoints[i] = replicas[i].endpoint()
	}
	lb, err := newBalancer(endpoints)
	if err != nil {
		return nil, err
	}
	tasks, tools, err := b.startPlatform(ctx, lb, spec)
	if err != nil {
		return nil, err
	}
	run := &platformRun{spec: spec, fleetRun: &fleetRun{throttle: spec.throttle, duration: spec.duration, reads: newReadSeries(), throttled: map[string]int64{}, listenEnds: true}}
	if spec.throttle > 0 {
		run.window = [2]float64{run.duration.Seconds() / 3, 2 * run.duration.Seconds() / 3}
	}
	curves := map[string]*mapping.Tool{}
	for engine := range spec.targets {
		curves[engine], _ = set.Tool(platformTool(engine, 0))
	}
	clients := make([]*mcpclient.Client, o.clients)
	for i := range clients {
		clients[i] = lb.modern()
	}
	throttledBefore, limitedBefore := proxies.throttled(), proxies.sfn.Limited("ListExecutions")
	pids := []int{os.Getpid(), b.temporalPID, b.sfnPID, listener(os.Getenv("RESTATE_INGRESS_URL"))}
	for _, c := range replicas {
		pids = append(pids, c.pid())
	}
	cpu := startCPU(pids...)

	runCtx, stop := context.WithTimeout(ctx, run.duration)
	defer stop()
	lb.record(spec.unread)
	t0 := time.Now()
	run.from = t0 // the ends of tasks that ended while the others started are not the run's
	var wg sync.WaitGroup
	wg.Go(func() {
		run.reads.sample(runCtx, func() map[string]int64 {
			reads := proxies.reads()
			reads["temporal-list"] = proxies.temporal.Calls("ListWorkflowExecutions")
			return reads
		}, t0)
	})
	if spec.throttle > 0 {
		wg.Go(func() {
			sleep(runCtx, time.Duration(run.window[0]*float64(time.Second)))
			proxies.throttle(spec.throttle)
			sleep(runCtx, time.Duration((run.window[1]-run.window[0])*float64(time.Second)))
			proxies.throttle(0)
		})
	}
	for i, own := range tasksByClient(tasks, len(clients)) {
		wg.Go(func() { run.listeners.listen(runCtx, clients[i], own, run.countError) })
	}
	for i, task := range tasks {
		wg.Go(func() { run.poll(runCtx, clients[i%len(clients)], task, curves[task.engine]) })
	}
	wg.Wait()
	end := time.Now()
	lb.record(false)
	busy, machineBusy := cpu.stop()
	proxies.throttle(0)
	for engine, n := range proxies.throttled() {
		run.throttled[engine] = n - throttledBefore[engine]
	}
	run.limited = proxies.sfn.Limited("ListExecutions") - limitedBefore
	engineOf := make(map[string]string, len(tasks))
	for _, t := range tasks {
		engineOf[t.id] = t.engine
	}
	run.unreadOf = map[string][]float64{}
	for _, p := range lb.unreadPolls() {
		run.unread = append(run.unread, p.latency)
		run.unreadOf[engineOf[p.task]] = append(run.unreadOf[engineOf[p.task]], p.latency)
	}
	if err := b.endsSeen(ctx, run.fleetRun, tasks, end); err != nil {
		return nil, err
	}
	for i, c := range replicas {
		if cc, err := c.counts(""); err == nil {
			b.logf("    replica %d: %s", i, replicaReads(cc))
		}
		b.stopChild(c)
	}
	b.cleanup()
	served := make([]string, len(lb.served))
	for i := range lb.served {
		served[i] = strconv.FormatInt(lb.served[i].Load(), 10)
	}
	b.logf("    %d tasks of %d tools; %d polls (%.0f/s), %d answers of running tasks (%d stale), %d client errors, %d ends (%d seen late), %s; requests to each replica %s",
		len(tasks), len(tools), run.polls.Load(), float64(run.polls.Load())/run.duration.Seconds(), run.answers, run.stale, run.errors,
		len(run.delays), run.late, run.listeners.summary(), strings.Join(served, "/"))
	var perEngine []string
	for _, engine := range fleetEngines {
		if spec.targets[engine] > 0 {
			perEngine = append(perEngine, fmt.Sprintf("%s reads/s max %.1f, staleness p95 %.1f s, end to notified p95 %.1f s",
				engine, run.reads.maxWindow(engine, 10), p95(run.stalenessOf[engine]), p95(run.listeners.delaysOf[engine])))
		}
	}
	if spec.targets["sfn"] > 0 {
		perEngine = append(perEngine, fmt.Sprintf("sfn ListExecutions/s max %.1f (%d refused by the quota)", run.reads.maxWindow("sfn-list", 10), run.limited))
	}
	if spec.targets["temporal"] > 0 {
		perEngine = append(perEngine, fmt.Sprintf("temporal ListWorkflowExecutions/s (of its reads) mean %.1f", run.reads.meanWindow("temporal-list", 10)))
	}
	b.logf("    %s", strings.Join(perEngine, "; "))
	if spec.unread {
		var of []string
		for _, engine := range fleetEngines {
			if l := run.unreadOf[engine]; len(l) > 0 {
				of = append(of, fmt.Sprintf("%s %d, p99 %.2f s", engine, len(l), pct(l, 99)))
			}
		}
		b.logf("    polls of tasks their replica had not read: %d, p50 %.2f s, p99 %.2f s (%s)", len(run.unread), pct(run.unread, 50), pct(run.unread, 99), strings.Join(of, "; "))
	}
	b.logf("    CPU over the run (%% of a core): bench %.0f, Temporal %.0f, Step Functions (moto) %.0f, Restate %.0f, replicas %s; the machine %.0f of %d00",
		busy[0], busy[1], busy[2], busy[3], joinCPU(busy[4:]), machineBusy, numCPU())
	return run, nil
}

// describeTargets says what a run serves, for the progress.
func describeTargets(spec platformSpec) string {
	var parts []string
	for _, engine := range fleetEngines {
		if n := spec.targets[engine]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d targets", engine, n))
		}
	}
	s := strings.Join(parts, ", ")
	if spec.targets["sfn"] > 0 {
		s += map[bool]string{true: ", Step Functions' event source on", false: ", no Step Functions event source"}[spec.events != ""]
	}
	if spec.throttle > 0 {
		s += fmt.Sprintf(", %.0f%% of reads throttled in the middle third", spec.throttle*100)
	}
	return s + ", " + spec.duration.String()
}

func joinCPU(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%.0f", x)
	}
	return strings.Join(s, "/")
}

// sortedTexts are the keys of texts, the most frequent first.
func sortedTexts(texts map[string]int) []string {
	keys := make([]string, 0, len(texts))
	for k := range texts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if texts[keys[i]] != texts[keys[j]] {
			return texts[keys[i]] > texts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

// platformMapping is the mapping the run's replicas serve: a block per engine of the run, with
// the figure's budget set by the child (childConfig.Budgets), and a tool per target.
func (b *bench) platformMapping(spec platformSpec, arns []string) string {
	var s strings.Builder
	s.WriteString("# The fleet-platform figure's mapping (test/bench/fleetplatform.go).\nversion: 1\nengines:\n")
	if spec.targets["temporal"] > 0 {
		s.WriteString("  temporal:\n    temporal: {address: \"${TEMPORAL_ADDRESS}\", namespace: \"${TEMPORAL_NAMESPACE:-default}\"}\n")
	}
	if spec.targets["sfn"] > 0 {
		s.WriteString("  aws:\n    stepfunctions:\n      region: \"${AWS_REGION:-us-east-1}\"\n      endpoint: \"${SFN_ENDPOINT}\"\n")
		if spec.events != "" {
			s.WriteString("      " + sfnEventsYAML(spec.events, os.Getenv("SFN_ENDPOINT")) + "\n")
		}
	}
	if spec.targets["restate"] > 0 {
		s.WriteString("  restate:\n    restate: {ingress: \"${RESTATE_INGRESS_URL}\", admin: \"${RESTATE_ADMIN_URL}\"}\n")
	}
	s.WriteString("tools:\n")
	for _, engine := range fleetEngines {
		for i := range spec.targets[engine] {
			fmt.Fprintf(&s, "  - name: %s\n    description: Waits the given seconds, then echoes the text (the fleet-platform figure's %s target %d).\n    engine: %s\n",
				platformTool(engine, i), engine, i, platformBlocks[engine])
			switch engine {
			case "sfn":
				fmt.Fprintf(&s, "    stateMachine: %s\n", arns[i])
			case "temporal":
				fmt.Fprintf(&s, "    workflow: {type: %s, taskQueue: %s}\n", platformWorkflowType(i), workerQueue)
			case "restate":
				fmt.Fprintf(&s, "    invoke: {service: %s, handler: %s}\n", platformService, platformHandler(i))
			}
			s.WriteString("    ttl: unlimited\n    inputSchema: {type: object}\n")
		}
	}
	return s.String()
}

// startPlatform starts the run's tasks through the balancer, 16 at a time: -fleet-platform-tasks
// per engine of the run (in the order of fleetEngines), task j of an engine on its target j mod
// its targets, each running a random length from a third of spec.lengths to twice and a third of
// it; task i is client i mod clients's, which follows pollIntervalMs when it is even.
func (b *bench) startPlatform(ctx context.Context, lb *balancer, spec platformSpec) ([]*fleetTask, []string, error) {
	o := b.opts.platform
	var tasks []*fleetTask
	var tools []string
	for _, engine := range fleetEngines {
		if spec.targets[engine] == 0 {
			continue
		}
		for j := range o.tasks {
			d := spec.lengths
			length := d/3 + time.Duration(rand.Float64()*float64(2*d))
			tasks = append(tasks, &fleetTask{engine: engine, length: length.Round(time.Second), follows: (len(tasks)%o.clients)%2 == 0})
			tools = append(tools, platformTool(engine, j%spec.targets[engine]))
		}
	}
	client := lb.modern()
	t0, retriedBefore := time.Now(), retried.Load()
	var mu sync.Mutex
	first, last := map[string]time.Time{}, map[string]time.Time{}
	err := parallel(len(tasks), 16, func(i int) error {
		task := tasks[i]
		t := time.Now()
		id, err := b.start(ctx, client, tools[i], map[string]any{"seconds": int(task.length.Seconds()), "text": "fleet"})
		if err != nil {
			return fmt.Errorf("starting the platform's task %d (%s): %w", i, tools[i], err)
		}
		task.id, task.started = id, time.Now()
		mu.Lock()
		if first[task.engine].IsZero() || t.Before(first[task.engine]) {
			first[task.engine] = t
		}
		if task.started.After(last[task.engine]) {
			last[task.engine] = task.started
		}
		mu.Unlock()
		task.ref, err = b.ref(id)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	var rates []string
	for _, engine := range fleetEngines {
		if n := o.tasks; !first[engine].IsZero() {
			rates = append(rates, fmt.Sprintf("%s %.0f/s", engine, float64(n)/last[engine].Sub(first[engine]).Seconds()))
		}
	}
	b.logf("    started %d tasks in %s (%s; %d requests sent again, marked retryable)", len(tasks), time.Since(t0).Round(time.Millisecond), strings.Join(rates, ", "), retried.Load()-retriedBefore)
	return tasks, tools, nil
}

// ensurePlatformStateMachines creates the figure's n state machines (wait and echo) on the Step
// Functions endpoint where they do not exist yet, and returns their ARNs.
func (b *bench) ensurePlatformStateMachines(ctx context.Context, n int) ([]string, error) {
	c := b.sc
	have := map[string]string{}
	pages := sfn.NewListStateMachinesPaginator(c, &sfn.ListStateMachinesInput{})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing state machines: %w", err)
		}
		for _, sm := range page.StateMachines {
			have[aws.ToString(sm.Name)] = aws.ToString(sm.StateMachineArn)
		}
	}
	arns := make([]string, n)
	for i := range n {
		name := platformStateMachine(i)
		if arn, ok := have[name]; ok {
			arns[i] = arn
			continue
		}
		out, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
			Name: aws.String(name), Definition: aws.String(sfnexamples.Definitions()[sfnexamples.WaitAndEcho]),
			RoleArn: aws.String("arn:aws:iam::123456789012:role/taskgate-examples"), Type: types.StateMachineTypeStandard,
		})
		if err != nil {
			return nil, fmt.Errorf("creating state machine %s: %w", name, err)
		}
		arns[i] = aws.ToString(out.StateMachineArn)
	}
	return arns, nil
}

// servePlatformRestate serves the Restate service of the figure's targets (BenchPlatform, with n
// handlers that wait and echo as the example WaitAndEcho) from the bench process, registers it
// with the Restate server, and returns what stops it.
func (b *bench) servePlatformRestate(ctx context.Context, n int) (func(), error) {
	svc := restatesdk.NewService(platformService, restatesdk.WithDocumentation("The fleet-platform figure's Restate targets: each handler waits the given seconds, then echoes the text."))
	for i := range n {
		svc = svc.Handler(platformHandler(i), restatesdk.NewServiceHandler(platformEcho))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	serveCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan error, 1)
	go func() {
		// No log: the SDK logs an error for every invocation the cleanup kills.
		served <- restateexamples.Serve(serveCtx, ln, slog.DiscardHandler, []restatesdk.ServiceDefinition{svc})
	}()
	stopAll := func() {
		stop()
		<-served
	}
	var ep restate.Endpoints
	driver.As(b.restate.driver, &ep)
	if err := restate.Register(ctx, ep, "http://"+ln.Addr().String()); err != nil {
		stopAll()
		return nil, fmt.Errorf("registering the fleet-platform Restate service: %w", err)
	}
	return stopAll, nil
}

// platformEcho is the handler of every Restate target of the figure: WaitAndEcho's.
func platformEcho(ctx restatesdk.Context, in restateexamples.EchoInput) (restateexamples.EchoOutput, error) {
	if err := restatesdk.Sleep(ctx, time.Duration(in.Seconds*float64(time.Second))); err != nil {
		return restateexamples.EchoOutput{}, err
	}
	return restateexamples.EchoOutput{Text: in.Text}, nil
}

// pct is the nearest-rank percentile p (0-100) of v; NaN when empty.
func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[min(len(s)-1, max(0, int(math.Ceil(p/100*float64(len(s))))-1))]
}

// platformRows records the figure's rows. A row with a target has it in the direct column (met:
// taskgate at most direct, a ratio of 1 or less), and the progress says which met it.
func (b *bench) platformRows(main, plain, throttled *platformRun, scale map[int]*platformRun, runs []*platformRun, topic string) {
	o := b.opts.platform
	none := math.NaN()
	var met, missed []string
	add := func(name, unit string, target, v float64) {
		b.res.add(figPlatform, name, unit, target, v)
		if math.IsNaN(target) {
			return
		}
		if v <= target {
			met = append(met, fmt.Sprintf("%s %s ≤ %s", name, formatValue(round(v)), formatValue(target)))
		} else {
			missed = append(missed, fmt.Sprintf("%s %s > %s", name, formatValue(round(v)), formatValue(target)))
		}
	}
	const fresh, notified, throttledNotified, unreadPoll, flat = 2.0, 2.0, 10.0, 2.0, 1.5
	add("staleness p95 (s)", "s", fresh, p95(main.staleness))
	for _, engine := range fleetEngines {
		add(engine+" staleness p95 (s)", "s", fresh, p95(main.stalenessOf[engine]))
	}
	add("end to notified p95 (s)", "s", notified, p95(main.listeners.delays))
	for _, engine := range fleetEngines {
		add(engine+" end to notified p95 (s)", "s", notified, p95(main.listeners.delaysOf[engine]))
	}
	add("sfn (no events) staleness p95 (s)", "s", none, p95(plain.stalenessOf["sfn"]))
	add("sfn (no events) end to notified p95 (s)", "s", none, p95(plain.listeners.delaysOf["sfn"]))
	for _, engine := range fleetEngines {
		add(engine+" engine reads per second, max over 10 s windows", "reads/s", o.budget, main.reads.maxWindow(engine, 10))
	}
	add("budget (reads/s)", "reads/s", none, o.budget)
	add("sfn ListExecutions per second, max over 10 s windows", "reads/s", none, main.reads.maxWindow("sfn-list", 10))
	add("sfn ListExecutions refused by the listing quota", unitCount, none, float64(main.limited))
	errs := 0
	for _, r := range runs {
		errs += r.errors
	}
	add("client errors", unitErrors, 0, float64(errs))
	if throttled != nil {
		add("ends not notified", unitErrors, 0, float64(throttled.listeners.missed))
		add("throttled end to notified p95 (s)", "s", throttledNotified, p95(throttled.listeners.delays))
		for _, engine := range fleetEngines {
			add("throttled "+engine+" end to notified p95 (s)", "s", throttledNotified, p95(throttled.listeners.delaysOf[engine]))
		}
	}
	var rates []float64
	for _, t := range o.scaleTargets {
		r := scale[t].reads.maxWindow("temporal", 10)
		rates = append(rates, r)
		add(fmt.Sprintf("temporal reads per second at %d targets", t), "reads/s", o.budget, r)
	}
	add("temporal reads per second, most over fewest of the target counts", "x", flat, slices.Max(rates)/slices.Min(rates))
	for _, t := range o.scaleTargets { // what the budget does not let the reads show
		add(fmt.Sprintf("temporal staleness p95 at %d targets (s)", t), "s", none, p95(scale[t].stalenessOf["temporal"]))
	}
	add("polls of unread tasks p99 (s)", "s", unreadPoll, pct(main.unread, 99))
	b.logf("  targets met: %d of %d", len(met), len(met)+len(missed))
	for _, m := range missed {
		b.logf("    missed: %s", m)
	}
	for _, r := range runs { // every kind of error, the most frequent first
		for _, text := range sortedTexts(r.errorTexts) {
			b.logf("  client errors in run %s: %d× %s", r.spec.label, r.errorTexts[text], text)
		}
	}

	events := "no event source (this build provisions none, and -fleet-platform-events-topic names none, or -fleet-platform-events off): the main run's Step Functions figures are also the sfn (no events) rows"
	if topic != "" {
		events = fmt.Sprintf("the event source %s in the main and throttled runs; the sfn (no events) rows are from a run of Step Functions alone (the same tasks and clients) without it", topic)
	}
	b.res.note(figPlatform, "%d taskgate processes (replicas; each with --replicas %d: a share of every block's budget) serve one mapping behind a round-robin balancer on the clients' side (every request sent straight to the next replica, as a mesh sidecar or gRPC's round_robin does, so that the bench does not serve each request twice; a subscriptions/listen, one streaming POST, stays on the replica it opened on). One engine block per engine, each with %d tools of targets of their own: state machines on the local Step Functions endpoint (wait and echo), Temporal workflow types (WaitAndEcho on the bench's worker under as many names), handlers of a Restate service the bench serves. %d tasks per engine spread evenly over its targets, started through the balancer, each waiting a random length from a third of the run to twice and a third of it; %d clients (2026-07-28, over HTTP) each own an equal share of every engine's tasks, poll each in a loop of its own (the even clients follow pollIntervalMs, the odd ones poll every 250 ms) and listen for them. Runs of %s: the main one, fault-free; %s; the throttled run, with the proxies answering %.0f%% of the Step Functions and Temporal reads and listings in its middle third as the engines do when throttling; and Temporal alone with its %d tasks over each of %v workflow types, %s each (the tasks' lengths the main run's).",
		o.replicas, o.replicas, o.targets, o.tasks, o.clients, o.duration, events, o.throttle*100, o.tasks, o.scaleTargets, o.scaleDuration)
	b.res.note(figPlatform, "Every replica reaches each engine through the same proxy (test/apifaults), so the reads of all replicas count together: each block's budget is %g reads a second for the deployment (a burst of one in each replica), and the Step Functions proxy enforces the listing quota of the smaller regions, ListExecutions in a bucket of %d refilled at %g a second (ThrottlingException past it, counted in the refused row). Reads per second as the fleet figure counts them (max over 10 s windows from the start of the run); staleness, end to notified and client errors as the fleet figure's. Client errors count every run's. Ends not notified: the throttled run's. Polls of unread tasks: polls of the main run that reached a replica no request naming their task had reached before (no start, poll or listen), from their arrival at the balancer to the end of their answer, with the budget spent by the clients' first polls.",
		o.budget, o.listBurst, o.listRate)
	b.res.note(figPlatform, "Targets are in the direct column, met when taskgate is at most it (a ratio of 1 or less): staleness and end to notified p95 within 2 s on each engine (Step Functions with its event source), reads per second within the budget, no client error, every end notified, throttled end to notified p95 within 10 s, polls of unread tasks p99 within 2 s; the reads per second at each number of targets are flat when the most is at most 1.5 times the fewest.")
}

// replicaReads says what reached each engine block of a replica, and what its sweeps did.
func replicaReads(cc childCounts) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(cc.Blocks)) {
		n, sw := cc.Blocks[name], cc.Sweeps[name]
		parts = append(parts, fmt.Sprintf("%s describe %d, outcome %d, sweep %d in %.1f s at the engine (rounds %d, pages %d in %s, confirms %d, failures %d, notices %d, following %d)",
			name, n[0], n[1], n[2], float64(n[3])/1000, sw.Rounds, sw.Pages, sw.Listing.Round(time.Millisecond), sw.Confirms, sw.Failures, sw.Notices, sw.Followed))
	}
	return strings.Join(parts, "; ")
}
