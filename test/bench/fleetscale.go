package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/internal/mcpclient"
	"github.com/taskgate/taskgate/test/apifaults"
)

// Figure 8: how the cost of a fleet grows with its size. For each of -fleet-scale-sizes, N
// Temporal workflows that stay running (bench_running: no worker polls their queue) are in flight,
// started through one taskgate process under the fleet's read budget (16 at a time, the tasks of
// the smaller sizes kept) and each read once with tasks/get; then fleetScaleClients clients poll
// random tasks of the N every 250 ms for -fleet-scale-duration. The process reaches Temporal
// through a counting proxy: the engine reads per second in 10 s windows from the end of the
// first pass are the fleet's cost at that size, and the answers' age (now - lastUpdatedAt) its
// freshness. Reads that answer for many tasks at once keep the cost flat as N grows.

// fleetScaleClients poll the tasks of the fleet-scale figure.
const fleetScaleClients = 50

// scaleStep is what one size of the figure measured.
type scaleStep struct {
	// reads are the Temporal engine reads of each second ("temporal").
	reads      readSeries
	mu         sync.Mutex
	polls      int
	ages       []float64 // of the answers about running tasks (s)
	errors     int
	firstError error
}

func (b *bench) fleetScaleFigure(ctx context.Context) error {
	b.logf("fleet scale (figure 8)")
	tp, err := apifaults.NewTemporal(os.Getenv("TEMPORAL_ADDRESS"))
	if err != nil {
		return err
	}
	defer tp.Close()
	defer b.cleanup()
	c, err := b.startChild(ctx, "fleet-scale", childConfig{
		Budgets: map[string]adapters.Budget{"temporal": {ReadsPerSecond: b.opts.fleetBudget, Burst: 1}},
		Env:     map[string]string{"TEMPORAL_ADDRESS": tp.Address()},
	})
	if err != nil {
		return err
	}
	client := b.modern(c.endpoint())
	var ids []string
	for _, n := range b.opts.fleetScaleSizes {
		t0 := time.Now()
		more, err := b.startRunning(ctx, client, n-len(ids), true)
		if err != nil {
			return err
		}
		ids = append(ids, more...)
		started := time.Since(t0)
		if err := parallel(len(ids), 16, func(i int) error {
			_, err := get(ctx, client, ids[i], "")
			return err
		}); err != nil {
			return fmt.Errorf("the first pass over %d running tasks: %w", n, err)
		}
		b.logf("  %d running: started %d in %s, read each once in %s", n, len(more), started.Round(time.Millisecond), (time.Since(t0) - started).Round(time.Millisecond))
		step := b.pollScale(ctx, c, ids, func() int64 { return sumOps(tp.Calls, temporalReads) })
		b.scaleRows(n, step)
	}
	b.res.note(8, "N Temporal workflows that stay running (bench_running: no worker polls their queue), started through one taskgate process (tools/call, 16 at a time; the workflows of a smaller N stay for the next) whose Temporal block has a read budget of %g reads a second with a burst of 1 (the direct column), each read once through it with tasks/get (the first pass). Then %d clients (2026-07-28, over HTTP) each poll a random task of the N every 250 ms for %s. The process reaches Temporal through a proxy (test/apifaults) that counts the reads (DescribeWorkflowExecution, GetWorkflowExecutionHistory, ListWorkflowExecutions) from the end of the first pass, in 10 s windows (each window's reads over the time its samples lasted): their max and mean. Staleness: the age (now - lastUpdatedAt) of the answers.",
		b.opts.fleetBudget, fleetScaleClients, b.opts.fleetScaleDuration)
	return nil
}

// pollScale polls random tasks of ids through c from fleetScaleClients clients for the figure's
// duration, counting the engine reads (reads: their running total) each second.
func (b *bench) pollScale(ctx context.Context, c *child, ids []string, reads func() int64) *scaleStep {
	step := &scaleStep{}
	t0 := time.Now()
	runCtx, stop := context.WithDeadline(ctx, t0.Add(b.opts.fleetScaleDuration))
	defer stop()
	// The sampler outlives the polls a little, so that it counts the last whole second too.
	sampleCtx, stopSampling := context.WithDeadline(ctx, t0.Add(b.opts.fleetScaleDuration+200*time.Millisecond))
	defer stopSampling()
	step.reads = newReadSeries()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		step.reads.sample(sampleCtx, func() map[string]int64 { return map[string]int64{"temporal": reads()} }, t0)
	}()
	for range fleetScaleClients {
		client := b.modern(c.endpoint())
		wg.Add(1)
		go func() {
			defer wg.Done()
			step.poll(runCtx, client, ids)
		}()
	}
	wg.Wait()
	return step
}

// poll is one client's loop: a random task of ids every 250 ms, until ctx ends.
func (step *scaleStep) poll(ctx context.Context, c *mcpclient.Client, ids []string) {
	next := time.Duration(rand.Int64N(int64(250 * time.Millisecond)))
	for {
		sleep(ctx, next)
		next = 250 * time.Millisecond
		if ctx.Err() != nil {
			return
		}
		a, err := callOnce(ctx, c, "tasks/get", map[string]any{"taskId": ids[rand.IntN(len(ids))]})
		if ctx.Err() != nil {
			return
		}
		age := time.Since(a.LastUpdatedAt).Seconds()
		step.mu.Lock()
		step.polls++
		switch {
		case err != nil:
			step.errors++
			if step.firstError == nil {
				step.firstError = err
			}
		case a.Status == "working":
			step.ages = append(step.ages, age)
		}
		step.mu.Unlock()
	}
}

// scaleRows records the rows of one size, named as issue 30 names them.
func (b *bench) scaleRows(n int, step *scaleStep) {
	budget, none := b.opts.fleetBudget, math.NaN()
	b.res.add(8, fmt.Sprintf("temporal reads per second at %d running", n), "reads/s", budget, step.reads.maxWindow("temporal", 10))
	b.res.add(8, fmt.Sprintf("temporal reads per second at %d running, mean over 10 s windows", n), "reads/s", budget, step.reads.meanWindow("temporal", 10))
	b.res.add(8, fmt.Sprintf("temporal staleness p95 at %d running (s)", n), "s", none, p95(step.ages))
	b.res.add(8, fmt.Sprintf("client errors at %d running", n), unitErrors, 0, float64(step.errors))
	b.logf("  %d running: %d polls, %d errors; reads/s over 10 s windows: max %.1f, mean %.1f; staleness p95 %.1f s",
		n, step.polls, step.errors, step.reads.maxWindow("temporal", 10), step.reads.meanWindow("temporal", 10), p95(step.ages))
	if step.firstError != nil {
		b.logf("  first client error: %v", step.firstError)
	}
}
