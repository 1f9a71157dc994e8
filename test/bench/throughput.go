package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/internal/mcpclient"
)

// Figures 3 and 5: concurrent pollers of running tasks.

// phase is one measured interval of concurrent polling.
type phase struct {
	ok, errs int64
	elapsed  time.Duration
	lat      []time.Duration // sorted, of the polls that succeeded
	firstErr error
	// reads are the engine reads the taskgate processes counted; maxInFlight the most engine
	// reads in flight at once for one execution, in any of them.
	reads       int64
	maxInFlight int
	// cpu is each measured process's CPU, and machine the whole machine's, in % of one core.
	cpu     []float64
	machine float64
}

func (p phase) rate() float64 { return float64(p.ok) / p.elapsed.Seconds() }

// load runs pollers goroutines that call poll(worker, iteration) back to back: a warm-up of a
// fifth of the duration, then the measured duration. A poll counts when it completes inside the
// measured interval (so the rate is not biased by the polls in flight at either edge). The
// children's engine counts and the CPU of pids are read at both edges.
func (b *bench) load(ctx context.Context, pollers int, poll func(ctx context.Context, w, i int) error, children []*child, pids []int) (phase, error) {
	var state atomic.Int32    // 0 warm-up, 1 measuring, 2 stopping
	var warmed sync.WaitGroup // every poller has completed a poll (so has its connection)
	warmed.Add(pollers)
	lats := make([][]time.Duration, pollers)
	errs := make([]int64, pollers)
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for w := range pollers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; state.Load() != 2; i++ {
				t0 := time.Now()
				err := poll(ctx, w, i)
				d := time.Since(t0)
				if i == 0 {
					warmed.Done()
				}
				if state.Load() != 1 {
					continue
				}
				if err != nil {
					errs[w]++
					once.Do(func() { firstErr = err })
					continue
				}
				lats[w] = append(lats[w], d)
			}
		}()
	}
	// counts sums the children's engine reads and their most reads in flight for one execution
	// (since the last reset).
	counts := func(query string) (reads int64, inFlight int, err error) {
		for _, c := range children {
			cc, err := c.counts(query)
			if err != nil {
				return 0, 0, err
			}
			reads += cc.Reads()
			inFlight = max(inFlight, cc.MaxInFlight)
		}
		return reads, inFlight, nil
	}
	// The warm-up lasts a fifth of the duration, and until every poller has been answered once.
	warm := time.After(b.opts.duration / 5)
	allWarm := make(chan struct{})
	go func() { warmed.Wait(); close(allWarm) }()
	select {
	case <-allWarm:
	case <-ctx.Done():
	}
	select {
	case <-warm:
	case <-ctx.Done():
	}
	reads0, _, err := counts("?reset=1")
	meter := startCPU(pids...)
	t1 := time.Now()
	state.Store(1)
	sleep(ctx, b.opts.duration)
	state.Store(2)
	p := phase{elapsed: time.Since(t1)}
	p.cpu, p.machine = meter.stop()
	reads1, inFlight, err2 := counts("")
	wg.Wait()
	if err = errors.Join(err, err2, ctx.Err()); err != nil {
		return phase{}, err
	}
	p.reads, p.maxInFlight = reads1-reads0, inFlight
	for w := range pollers {
		p.ok += int64(len(lats[w]))
		p.errs += errs[w]
		p.lat = append(p.lat, lats[w]...)
	}
	slices.Sort(p.lat)
	p.firstErr = firstErr
	if p.ok == 0 {
		return p, fmt.Errorf("no poll succeeded in %s with %d pollers: %v", b.opts.duration, pollers, firstErr)
	}
	return p, nil
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}

// taskPicker spreads pollers over tasks: poller w's i-th poll reads task (w + i*pollers) mod n.
func taskPicker(pollers, n int) func(w, i int) int {
	return func(w, i int) int { return (w + i*pollers) % n }
}

// directPoll is a direct DescribeWorkflowExecution of a running task.
func (b *bench) directPoll(refs []adapters.Ref, pick func(w, i int) int) func(ctx context.Context, w, i int) error {
	return func(ctx context.Context, w, i int) error {
		st, err := b.describeTemporal(ctx, refs[pick(w, i)])
		if err == nil && st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			err = fmt.Errorf("DescribeWorkflowExecution: %s, want running", st)
		}
		return err
	}
}

// taskgatePoll is a tasks/get of a running task, through the client that client(w, i) picks.
func taskgatePoll(ids []string, pick func(w, i int) int, client func(w, i int) *mcpclient.Client) func(ctx context.Context, w, i int) error {
	return func(ctx context.Context, w, i int) error {
		_, err := get(ctx, client(w, i), ids[pick(w, i)], "working")
		return err
	}
}

func (b *bench) refs(ids []string) ([]adapters.Ref, error) {
	refs := make([]adapters.Ref, len(ids))
	for i, id := range ids {
		var err error
		if refs[i], err = b.ref(id); err != nil {
			return nil, err
		}
	}
	return refs, nil
}

func pollersLabel(n int) string {
	if n == 1 {
		return "1 poller"
	}
	return fmt.Sprintf("%d pollers", n)
}

func tasksLabel(n int) string {
	if n == 1 {
		return "1 running task"
	}
	return fmt.Sprintf("%d running tasks", n)
}

func (b *bench) freshLabel() string {
	switch {
	case b.opts.fresh < 0:
		return "FreshFor -1 (every poll asks the engine)"
	case b.opts.fresh == 0:
		return "the defaults (a reading of a running task answers its polls for the task's polling interval, 1 s for a young task: a phase may make no engine call at all; the Temporal engine block's default read budget of 200 reads a second)"
	}
	return fmt.Sprintf("FreshFor %s", b.opts.fresh)
}

// throughputFigure: figure 3.
func (b *bench) throughputFigure(ctx context.Context) error {
	b.logf("throughput (figure 3)")
	c, err := b.startChild(ctx, "throughput", childConfig{FreshFor: b.opts.fresh})
	if err != nil {
		return err
	}
	ids, err := b.runningTasks(ctx, c, b.opts.tasks)
	if err != nil {
		return err
	}
	refs, err := b.refs(ids)
	if err != nil {
		return err
	}
	client := b.modern(c.endpoint())
	pids := []int{os.Getpid(), c.pid(), b.temporalPID}
	for _, n := range []int{1, len(ids)} {
		for _, pollers := range b.opts.pollers {
			name := fmt.Sprintf("%s, %s", pollersLabel(pollers), tasksLabel(n))
			pick := taskPicker(pollers, n)
			direct := func() (phase, error) { return b.load(ctx, pollers, b.directPoll(refs, pick), nil, pids) }
			through := func() (phase, error) {
				return b.load(ctx, pollers, taskgatePoll(ids, pick, func(int, int) *mcpclient.Client { return client }), []*child{c}, pids)
			}
			for rep := range b.opts.reps {
				d, t, err := alternate(rep, direct, through)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				b.res.add(3, name+": polls/s", "polls/s", d.rate(), t.rate())
				b.res.add(3, name+": engine calls/s", "calls/s", float64(d.ok+d.errs)/d.elapsed.Seconds(), float64(t.reads)/t.elapsed.Seconds())
				b.res.add(3, name+": errors", unitErrors, float64(d.errs), float64(t.errs))
				b.res.add(3, name+": p99", "ms", percentile(d.lat, 99), percentile(t.lat, 99))
				b.res.add(3, name+": most engine reads in flight for one task", "calls", math.NaN(), float64(t.maxInFlight))
				b.addCPU(3, name, []string{"bench process (load generator)", "taskgate process", "Temporal server"}, pids, d, t)
				b.logf("  %s, rep %d: direct %.0f polls/s (%d errors), taskgate %.0f polls/s (%d errors, %.0f engine calls/s, CPU taskgate %.0f%% Temporal %.0f%% bench %.0f%% machine %.0f%%)%s",
					name, rep+1, d.rate(), d.errs, t.rate(), t.errs, float64(t.reads)/t.elapsed.Seconds(), t.cpu[1], t.cpu[2], t.cpu[0], t.machine, errNote(d, t))
			}
		}
	}
	b.res.note(3, "Direct: the bench's pollers call DescribeWorkflowExecution on the running tasks (every call is an engine call). taskgate: the same pollers send tasks/get over HTTP (keep-alive connections, one per poller) to one taskgate process with %s. Poller w's i-th poll reads task (w + i*pollers) mod n. The tasks were started through taskgate on a queue no worker polls.", b.freshLabel())
	b.res.note(3, "Method: per configuration and repetition, a direct phase and a taskgate phase (their order alternating), each %s after a warm-up of a fifth of it; a poll counts when it completes inside the measured interval. Engine calls are counted at the engine boundary (a wrapper around adapters.Engine below the server's coalescing) in the taskgate process. CPU is user+system time from /proc/PID/stat over the measured interval, in %% of one core (the machine has %d); \"machine\" is every process on it, from /proc/stat.", b.opts.duration, numCPU())
	b.noteEngines(3)
	return nil
}

// alternate runs the two phases in an order that alternates with the repetition.
func alternate(rep int, a, b func() (phase, error)) (phase, phase, error) {
	if rep%2 == 1 {
		pb, err := b()
		if err != nil {
			return phase{}, phase{}, err
		}
		pa, err := a()
		return pa, pb, err
	}
	pa, err := a()
	if err != nil {
		return phase{}, phase{}, err
	}
	pb, err := b()
	return pa, pb, err
}

func errNote(phases ...phase) string {
	for _, p := range phases {
		if p.firstErr != nil {
			return fmt.Sprintf("; first error: %v", p.firstErr)
		}
	}
	return ""
}

// addCPU records the CPU of each measured process that was found (pids[i] > 0), and of the
// machine, in both phases.
func (b *bench) addCPU(figure int, name string, procs []string, pids []int, d, t phase) {
	for i, p := range procs {
		if pids[i] > 0 {
			b.res.add(figure, fmt.Sprintf("%s: CPU of the %s", name, p), unitCPU, d.cpu[i], t.cpu[i])
		}
	}
	b.res.add(figure, name+": CPU of the whole machine", unitCPU, d.machine, t.machine)
}

func (b *bench) noteEngines(figure int) {
	if b.temporalPID == 0 {
		b.res.note(figure, "The Temporal server's process was not found (it runs elsewhere, or as another user): its CPU is not shown.")
	}
}

// scaleOutFigure: figure 5.
func (b *bench) scaleOutFigure(ctx context.Context) error {
	b.logf("scale-out (figure 5)")
	one, err := b.startChild(ctx, "scaleout-1", childConfig{FreshFor: b.opts.fresh})
	if err != nil {
		return err
	}
	two, err := b.startChild(ctx, "scaleout-2", childConfig{FreshFor: b.opts.fresh})
	if err != nil {
		return err
	}
	ids, err := b.runningTasks(ctx, one, b.opts.tasks)
	if err != nil {
		return err
	}
	clients := []*mcpclient.Client{b.modern(one.endpoint()), b.modern(two.endpoint())}
	var next atomic.Uint64
	roundRobin := func(int, int) *mcpclient.Client { return clients[next.Add(1)%2] }
	first := func(int, int) *mcpclient.Client { return clients[0] }
	pids := []int{os.Getpid(), one.pid(), two.pid(), b.temporalPID}
	for _, n := range []int{1, len(ids)} {
		for _, pollers := range []int{64, 256} {
			name := fmt.Sprintf("%d pollers, %s", pollers, tasksLabel(n))
			pick := taskPicker(pollers, n)
			single := func() (phase, error) {
				return b.load(ctx, pollers, taskgatePoll(ids, pick, first), []*child{one}, pids)
			}
			pair := func() (phase, error) {
				return b.load(ctx, pollers, taskgatePoll(ids, pick, roundRobin), []*child{one, two}, pids)
			}
			for rep := range b.opts.reps {
				s, p, err := alternate(rep, single, pair)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				b.res.add(5, name+": polls/s", "polls/s", s.rate(), p.rate())
				b.res.add(5, name+": engine calls/s", "calls/s", float64(s.reads)/s.elapsed.Seconds(), float64(p.reads)/p.elapsed.Seconds())
				b.res.add(5, name+": errors", unitErrors, float64(s.errs), float64(p.errs))
				b.res.add(5, name+": p99", "ms", percentile(s.lat, 99), percentile(p.lat, 99))
				b.addCPU(5, name, []string{"bench process (load generator)", "first taskgate process", "second taskgate process", "Temporal server"}, pids, s, p)
				b.logf("  %s, rep %d: one process %.0f polls/s, two %.0f polls/s (x%.2f); CPU with two: taskgate %.0f%% + %.0f%%, Temporal %.0f%%, bench %.0f%%, machine %.0f%%%s",
					name, rep+1, s.rate(), p.rate(), p.rate()/s.rate(), p.cpu[1], p.cpu[2], p.cpu[3], p.cpu[0], p.machine, errNote(s, p))
			}
		}
	}
	b.res.note(5, "Direct column: one taskgate process takes every poll; taskgate column: two taskgate processes (same mapping, same key, same engine) take the polls in turn (a round-robin client: one shared counter picks the process of each request); ratio = two / one. The pollers send tasks/get over HTTP; the processes run with %s. Both processes run in both phases (the second idles in the first).", b.freshLabel())
	b.res.note(5, "Method: per configuration and repetition, a one-process and a two-process phase (their order alternating), each %s after a warm-up of a fifth of it. The machine has %d cores, shared by the load generator, the taskgate processes, the engine and anything else running: the CPU rows say which of them was busy (%% of one core; the whole machine's ceiling is %d%%).", b.opts.duration, numCPU(), 100*numCPU())
	b.noteEngines(5)
	return nil
}
