// Command bench measures what taskgate adds to the workflow engines it serves, against the engines
// themselves, in one run on one machine, and prints one table (optionally written as JSON and
// Markdown):
//
//  1. poll latency: a direct read of the engine against tasks/get over HTTP and over stdio,
//     2025-11-25 tasks/get and the task_status handle tool, for a running and an ended task, on
//     each engine (Temporal, Step Functions, Restate);
//  2. start latency: a direct start against tools/call -> CreateTaskResult, on each engine;
//  3. throughput: 1, 16, 64 and 256 concurrent pollers over 1 and over 1,000 running tasks;
//  4. memory: RSS and goroutines of a taskgate process with 0, 1,000 and 10,000 tasks in flight;
//  5. scale-out: one against two taskgate processes behind a round-robin client;
//  6. engine economy: engine calls over a simulated two-hour task, default polling against a fixed
//     1-second poll;
//  7. fleet: thousands of tasks on the three engines polled by hundreds of clients, which also
//     listen for them, against a small read budget: engine reads per second against it, how fresh
//     the answers are, how soon an end is seen and notified, and a run with the engines
//     throttling reads (it writes an SVG chart of the reads over time, -fleet-svg);
//  8. fleet-scale: how the engine reads and the answers' age grow with the number of running
//     Temporal workflows under the same budget (-fleet-scale-sizes);
//  9. fleet-platform: the platform a team runs: three taskgate replicas behind a round-robin
//     balancer, 20 targets on each engine, 200 clients that poll and listen, a budget for the
//     deployment and Step Functions' listing quota; fault-free, throttled, without Step Functions'
//     event source, and the cost as the targets grow (fleetplatform.go).
//
// taskgate runs in child processes of the bench (the bench binary run again; see child.go), so that
// its memory, CPU and profiles are its own. Direct and taskgate samples are interleaved and every
// measure is repeated (-reps): the ratio column is the median of the repetitions' ratios, with its
// spread beside it. With -engine-latency, every engine sits behind a TCP proxy that delays its
// bytes as a network would, so that the ratios are those of a deployment whose engines are not on
// its own loopback.
//
//	./scripts/with-engines go run ./test/bench [-short] [-reps 5] [-only poll-http,start] [-engine temporal] [-engine-latency 2ms]
//	    [-fleet-duration 3m] [-fleet-svg FILE] [-fleet-scale-sizes 1000,5000,10000] [-fleet-scale-duration 1m]
//	    [-fleet-platform-duration 90s] [-fleet-platform-events auto|on|off] [-json FILE] [-markdown FILE] [-cpuprofile FILE] [-memprofile FILE]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if code, ok := asHelper(); ok {
		os.Exit(code)
	}
	opts, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	// The SDKs' informational lines (a worker starting) would mix with the progress.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := run(ctx, opts, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// figureKeys are the names -only takes; "poll" stands for its four variants.
var figureKeys = []string{"poll-http", "poll-stdio", "poll-legacy", "poll-handle", "start", "throughput", "memory", "scaleout", "economy", "fleet", "fleet-scale", "fleet-platform"}

type options struct {
	short bool
	// n is the interleaved rounds of each latency measure per repetition; startN for starts.
	n, startN, reps int
	// duration is each throughput phase (after a warm-up of a fifth of it).
	duration time.Duration
	// tasks is the number of running tasks that throughput and scale-out poll.
	tasks   int
	pollers []int
	// memoryTasks are the in-flight task counts of the memory figure (after 0).
	memoryTasks []int
	// memoryHeap, when set, is where the memory figure writes a heap profile of its taskgate
	// process at each step (FILE with the step's task count before the extension), every
	// allocation sampled.
	memoryHeap string
	// economyTask is the simulated task's length.
	economyTask time.Duration
	// fresh is the FreshFor of the throughput and scale-out processes (0: the server's default).
	fresh time.Duration
	// The fleet figure: how long each run lasts, its tasks per engine, its clients, the read
	// budget of each engine block (reads a second), the share of reads throttled in the second
	// run (0: no second run), and where its chart goes ("": nowhere).
	fleetDuration              time.Duration
	fleetTasks, fleetClients   int
	fleetBudget, fleetThrottle float64
	fleetSVG                   string
	fleetScaleSizes            []int         // the fleet-scale figure's numbers of running workflows
	fleetScaleDuration         time.Duration // how long it polls at each
	platform                   platformOptions
	only                       map[string]bool
	engines                    map[string]bool
	// states are the task states of the poll figure: running, ended.
	states map[string]bool
	// engineLatency delays every byte between the engines and everything else, each way.
	engineLatency time.Duration
	jsonFile, markdownFile,
	cpuProfile, memProfile string
	args []string
}

func (o options) wants(key string) bool { return len(o.only) == 0 || o.only[key] }

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.BoolVar(&o.short, "short", false, "smoke mode (seconds): every figure, with small counts; for CI, not for numbers")
	fs.IntVar(&o.n, "n", 300, "interleaved rounds per repetition of each poll latency measure")
	fs.IntVar(&o.startN, "start-n", 100, "interleaved rounds per repetition of each start latency measure")
	fs.IntVar(&o.reps, "reps", 5, "repetitions of every measure (the ratio's spread is over them)")
	fs.DurationVar(&o.duration, "duration", 1500*time.Millisecond, "length of each throughput and scale-out phase")
	fs.IntVar(&o.tasks, "tasks", 1000, "running tasks that the throughput and scale-out pollers spread over")
	pollers := fs.String("pollers", "1,16,64,256", "concurrent pollers of the throughput figure")
	memory := fs.String("memory-tasks", "1000,10000", "tasks in flight at each step of the memory figure (after 0)")
	fs.StringVar(&o.memoryHeap, "memory-heap", "", "write a heap profile of the memory figure's taskgate process at each step to `FILE` (FILE with the step's task count before the extension: heap.10000.pprof); every allocation is sampled, which makes that process slower and larger: take the figure's numbers from a run without it")
	fs.DurationVar(&o.economyTask, "economy-task", 2*time.Hour, "simulated length of the engine-economy task")
	fs.DurationVar(&o.fleetDuration, "fleet-duration", 3*time.Minute, "length of each run of the fleet figure")
	fs.IntVar(&o.fleetTasks, "fleet-tasks", 1000, "running tasks on each engine in the fleet figure")
	fs.IntVar(&o.fleetClients, "fleet-clients", 200, "clients of the fleet figure (half follow pollIntervalMs, half poll every 250 ms)")
	fs.Float64Var(&o.fleetBudget, "fleet-budget", 10, "read budget of each engine block in the fleet figure, in reads per second")
	fs.Float64Var(&o.fleetThrottle, "fleet-throttle", 0.2, "share of engine reads the proxies throttle in the middle third of the fleet figure's second run (0: no second run)")
	fs.StringVar(&o.fleetSVG, "fleet-svg", "fleet.svg", "write the fleet figure's chart (its last run) to `FILE` (empty: no chart)")
	scaleSizes := fs.String("fleet-scale-sizes", "1000,5000,10000", "running Temporal workflows at each step of the fleet-scale figure")
	fs.DurationVar(&o.fleetScaleDuration, "fleet-scale-duration", time.Minute, "how long the fleet-scale figure polls at each size (at least 10s)")
	platformFlags(fs, &o.platform)
	fs.DurationVar(&o.fresh, "fresh", 0, "FreshFor of the throughput and scale-out processes (0: the server's default, readings reused for the task's polling interval; negative: every poll asks the engine)")
	only := fs.String("only", "", "comma-separated figures to run, of: poll ("+strings.Join(figureKeys[:4], ", ")+"), "+strings.Join(figureKeys[4:], ", ")+" (default all)")
	engines := fs.String("engine", "temporal,sfn,restate", "engines of the poll and start figures: temporal, sfn, restate")
	states := fs.String("poll-tasks", "running,ended", "tasks of the poll figure: running, ended")
	fs.DurationVar(&o.engineLatency, "engine-latency", 0, "put the engines at a distance: a TCP proxy delays every byte between them and the bench, direct reads and taskgate's alike, by this much each way (0: the engines on loopback)")
	fs.StringVar(&o.jsonFile, "json", "", "write the rows as JSON to FILE")
	fs.StringVar(&o.markdownFile, "markdown", "", "write the table as Markdown to FILE")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write CPU profiles of the taskgate processes to FILE (one per process: FILE with the process's label before the extension, or FILE itself when only one process ran)")
	fs.StringVar(&o.memProfile, "memprofile", "", "write allocation profiles of the taskgate processes to FILE, named as -cpuprofile's")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.args = args
	set := func(name string) bool {
		found := false
		fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
		return found
	}
	if o.short { // smoke sizes, unless given explicitly
		for name, apply := range map[string]func(){
			"n": func() { o.n = 20 }, "start-n": func() { o.startN = 5 }, "reps": func() { o.reps = 1 },
			"duration": func() { o.duration = 400 * time.Millisecond }, "tasks": func() { o.tasks = 20 },
			"memory-tasks": func() { *memory = "20,200" }, "economy-task": func() { o.economyTask = 2 * time.Minute },
			"fleet-duration": func() { o.fleetDuration = 30 * time.Second }, "fleet-tasks": func() { o.fleetTasks = 30 },
			"fleet-clients": func() { o.fleetClients = 6 }, "fleet-scale-sizes": func() { *scaleSizes = "20" },
			"fleet-scale-duration": func() { o.fleetScaleDuration = 10 * time.Second },
		} {
			if !set(name) {
				apply()
			}
		}
		for name, apply := range platformShort(&o.platform) {
			if !set(name) {
				apply()
			}
		}
	}
	var err error
	if o.pollers, err = ints(*pollers); err != nil {
		return o, fmt.Errorf("-pollers: %w", err)
	}
	if o.memoryTasks, err = ints(*memory); err != nil {
		return o, fmt.Errorf("-memory-tasks: %w", err)
	}
	if !slices.IsSorted(o.memoryTasks) {
		return o, fmt.Errorf("-memory-tasks must grow: %v", o.memoryTasks)
	}
	if err := o.platform.check(); err != nil {
		return o, err
	}
	if o.fleetScaleSizes, err = ints(*scaleSizes); err != nil {
		return o, fmt.Errorf("-fleet-scale-sizes: %w", err)
	}
	if !slices.IsSorted(o.fleetScaleSizes) {
		return o, fmt.Errorf("-fleet-scale-sizes must grow: %v", o.fleetScaleSizes)
	}
	if o.fleetScaleDuration < 10*time.Second {
		return o, fmt.Errorf("-fleet-scale-duration must be at least 10s (one window of the reads per second), not %s", o.fleetScaleDuration)
	}
	o.only = map[string]bool{}
	for _, k := range strings.Split(*only, ",") {
		switch k = strings.TrimSpace(k); {
		case k == "":
		case k == "poll":
			for _, v := range figureKeys[:4] {
				o.only[v] = true
			}
		case slices.Contains(figureKeys, k):
			o.only[k] = true
		default:
			return o, fmt.Errorf("-only %q: want poll, %s", k, strings.Join(figureKeys, ", "))
		}
	}
	if o.engines, err = choices("-engine", *engines, "temporal", "sfn", "restate"); err != nil {
		return o, err
	}
	if o.states, err = choices("-poll-tasks", *states, "running", "ended"); err != nil {
		return o, err
	}
	if o.n < 1 || o.startN < 1 || o.reps < 1 || o.tasks < 1 || o.duration <= 0 || o.economyTask < time.Second {
		return o, fmt.Errorf("-n, -start-n, -reps and -tasks must be at least 1, -duration positive, -economy-task at least a second")
	}
	if o.engineLatency < 0 {
		return o, fmt.Errorf("-engine-latency must not be negative")
	}
	if o.fleetDuration < 30*time.Second || o.fleetTasks < 1 || o.fleetClients < 1 || o.fleetBudget <= 0 || o.fleetThrottle < 0 || o.fleetThrottle > 1 {
		return o, fmt.Errorf("-fleet-duration must be at least 30s, -fleet-tasks and -fleet-clients at least 1, -fleet-budget positive, -fleet-throttle from 0 to 1")
	}
	return o, nil
}

// choices reads a comma-separated flag value whose items must be among valid.
func choices(flag, value string, valid ...string) (map[string]bool, error) {
	chosen := map[string]bool{}
	for _, v := range strings.Split(value, ",") {
		v = strings.TrimSpace(v)
		if !slices.Contains(valid, v) {
			return nil, fmt.Errorf("%s %q: want %s", flag, v, strings.Join(valid, " or "))
		}
		chosen[v] = true
	}
	return chosen, nil
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// run measures every selected figure and prints the table on stdout (progress on stderr).
func run(ctx context.Context, opts options, stdout, stderr io.Writer) ([]Row, error) {
	b, err := newBench(ctx, opts, stderr)
	if err != nil {
		return nil, err
	}
	defer b.close()
	header := []string{
		"machine: " + machine(),
		"load average before the run: " + loadAverage() + "; " + b.quiet(),
		"command: `./scripts/with-engines go run ./test/bench " + strings.Join(opts.args, " ") + "`",
		b.distance(),
		"started " + time.Now().UTC().Format(time.RFC3339),
	}
	b.logf("bench: %s", header[0])
	b.logf("bench: %s", header[1])
	figures := []struct {
		keys []string
		run  func(context.Context) error
	}{
		{figureKeys[:4], b.pollFigure},
		{[]string{"start"}, b.startFigure},
		{[]string{"throughput"}, b.throughputFigure},
		{[]string{"scaleout"}, b.scaleOutFigure},
		{[]string{"economy"}, b.economyFigure},
		{[]string{"fleet"}, b.fleetFigure},
		{[]string{"fleet-scale"}, b.fleetScaleFigure},
		{[]string{"fleet-platform"}, b.fleetPlatformFigure},
		{[]string{"memory"}, b.memoryFigure},
	}
	for _, f := range figures {
		if !slices.ContainsFunc(f.keys, opts.wants) {
			continue
		}
		t0 := time.Now()
		if err := f.run(ctx); err != nil {
			return nil, err
		}
		b.stopChildren() // each figure has processes of its own
		b.logf("  (%s)", time.Since(t0).Round(time.Millisecond))
	}
	b.stopChildren()
	b.finishProfiles()
	header = append(header, "load average after the run: "+loadAverage(),
		fmt.Sprintf("requests answered with an error marked retryable and sent again: %d", retried.Load()))
	rows := b.res.rows()
	printTable(stdout, rows, opts.reps)
	fmt.Fprintln(stdout)
	for _, h := range header {
		fmt.Fprintln(stdout, h)
	}
	if opts.jsonFile != "" {
		if err := writeJSON(opts.jsonFile, rows); err != nil {
			return rows, err
		}
	}
	if opts.markdownFile != "" {
		if err := writeMarkdown(opts.markdownFile, rows, b.res, header, opts.reps); err != nil {
			return rows, err
		}
	}
	return rows, nil
}

// distance says how far the engines are from everything the bench runs.
func (b *bench) distance() string {
	if b.opts.engineLatency == 0 {
		return "engines: on loopback"
	}
	return fmt.Sprintf("engines: behind TCP proxies that delay every byte by %s each way (-engine-latency), for direct reads and taskgate's alike", b.opts.engineLatency)
}

// quiet measures how busy the machine is for a second before the run.
func (b *bench) quiet() string {
	m := startCPU()
	time.Sleep(time.Second)
	_, busy := m.stop()
	return fmt.Sprintf("machine CPU busy over the second before the run: %.0f%% of %d cores' 100%% each", busy, numCPU())
}

// newHTTPClient is the load generator's client: enough idle connections for every poller, so that
// no poll pays for a new connection. It lets an idle connection go before the server does (after
// a minute), so that it never sends a request on one the server is closing.
func newHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		MaxIdleConns: 4096, MaxIdleConnsPerHost: 1024, IdleConnTimeout: 30 * time.Second, DisableCompression: true,
	}}
}
