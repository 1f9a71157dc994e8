package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/workflow"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/internal/mcpclient"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks/token"
)

// Figure 6: what polling one long task costs the engine over its whole life.
//
// A two-hour task cannot be waited for, so its time is simulated. Each client keeps a simulated
// clock that only its own polls advance: a poll at simulated age A is followed by one at A plus the
// interval (the pollIntervalMs of the answer, or a fixed second). Nothing in the server needs a
// hook:
//   - the task's age: each poll uses a task id that the bench mints (it holds the process's token
//     key) for the same execution, with its creation time set back to now - A, so that whatever the
//     server derives from the task's age (the pollIntervalMs it answers) is what it would answer at
//     age A;
//   - the end: the task's workflow (BenchHold, on the bench's own worker) runs until the bench
//     signals it, which it does when the simulated clock passes the task's length; the next poll
//     finds it completed, as a real client's next poll would;
//   - the reuse of readings: a reading answers polls for the curve's interval at the task's age,
//     and the server counts how far a reading is behind in the task's age as well as in real time
//     (adapters/coalesce): a poll at simulated age A finds a reading made at age A0 as old as
//     A - A0, as it would be in real time. The process has no read budget, whose bucket refills in
//     real time.
//
// The engine calls are counted per execution at the engine boundary of the taskgate process: what
// the reuse and the caches actually let through, including the final read of the outcome.
//
// The default polling is the mapping's own curve (mapping.Tool.PollIntervalAt of the tool, which
// sets no pollInterval): the server answers it, and the bench checks every answer against it and
// reports the calls the curve alone predicts, so that the figure follows the curve if it changes.

// benchHold runs until it receives the "finish" signal.
func benchHold(ctx workflow.Context, _ any) (map[string]string, error) {
	workflow.GetSignalChannel(ctx, "finish").Receive(ctx, nil)
	return map[string]string{"text": "finished"}, nil
}

// simPoller is what one simulated client did.
type simPoller struct {
	polls     int
	intervals []time.Duration // simulated time between its polls
	calls     int             // engine calls, for a direct client
}

func (b *bench) economyFigure(ctx context.Context) error {
	b.logf("engine economy (figure 6)")
	c, err := b.startChild(ctx, "economy", childConfig{PerRef: true, Budgets: unlimited})
	if err != nil {
		return err
	}
	if err := b.ensureWorker(ctx); err != nil {
		return err
	}
	set, err := benchTools()
	if err != nil {
		return err
	}
	hold, _ := set.Tool(toolHold)
	client := b.modern(c.endpoint())
	var claims [2]token.Claims
	for i := range claims {
		id, err := b.start(ctx, client, toolHold, map[string]any{})
		if err != nil {
			return err
		}
		if claims[i], err = b.tokens.Open(id, time.Now()); err != nil {
			return err
		}
	}
	directRef, err := b.startWorkflow(ctx, workerQueue, "BenchHold", `{}`)
	if err != nil {
		return err
	}
	t0 := time.Now()
	var wg sync.WaitGroup
	var pollers [3]simPoller
	var errs [3]error
	// 0: follows pollIntervalMs through taskgate; 1: polls every second through taskgate; 2: polls
	// the engine directly every second.
	for i := range pollers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch i {
			case 0:
				pollers[i], errs[i] = b.simulate(ctx, client, claims[0], 0, hold)
			case 1:
				pollers[i], errs[i] = b.simulate(ctx, client, claims[1], time.Second, hold)
			case 2:
				pollers[i], errs[i] = b.simulateDirect(ctx, directRef, time.Second)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		return err
	}
	cc, err := c.counts("?refs=1")
	if err != nil {
		return err
	}
	adaptive, fixed, direct := float64(cc.PerRef[claims[0].Ref.String()]), float64(cc.PerRef[claims[1].Ref.String()]), float64(pollers[2].calls)
	task := simLength(b.opts.economyTask) + " task"
	b.res.add(6, task+": engine calls, client follows pollIntervalMs (default polling)", "calls", direct, adaptive)
	b.res.add(6, task+": engine calls the mapping's default curve predicts (a Describe per poll, one outcome read)", "calls", direct, float64(curvePolls(hold, b.opts.economyTask)+1))
	b.res.add(6, task+": engine calls, client polls every second through taskgate", "calls", direct, fixed)
	b.res.add(6, task+": client polls, default polling", "polls", float64(pollers[2].polls), float64(pollers[0].polls))
	iv := pollers[0].intervals
	b.res.add(6, task+": pollIntervalMs answered at the first poll", "ms", 1000, ms(iv[0]))
	b.res.add(6, task+": pollIntervalMs answered at the last poll before the end", "ms", 1000, ms(iv[len(iv)-1]))
	b.logf("  engine calls over the task: default polling %.0f (%d polls, intervals %s..%s), every second through taskgate %.0f (%d polls), direct every second %.0f (%d polls); simulated in %s",
		adaptive, pollers[0].polls, iv[0], iv[len(iv)-1], fixed, pollers[1].polls, direct, pollers[2].polls, time.Since(t0).Round(time.Millisecond))
	b.res.note(6, "A %s task, simulated: each client's clock is advanced by its own polls (one poll, then the next at the answered pollIntervalMs, or a fixed second later), not by real time, so the counts do not depend on how fast the machine is. Direct column: a client that polls the engine directly every second (DescribeWorkflowExecution until the workflow has closed, then one GetWorkflowExecutionHistory of its close event for the result), counted by the bench. taskgate column: clients of one taskgate process sending tasks/get, either as the server says (waiting the pollIntervalMs of each answer: the default adaptive polling of a tool whose mapping sets no pollInterval, %s) or every second; their engine calls are counted per execution at the engine boundary of the process (below its freshness window and caches), including the final read of the outcome. The predicted row walks the same curve (mapping.Tool.PollIntervalAt) with no server: one Describe per poll and one outcome read.", simLength(b.opts.economyTask), curveLabel(hold))
	b.res.note(6, "How the server sees the simulated time, with no hook in it: each poll at simulated age A uses a task id for the same execution minted by the bench (it holds the process's token key) with its creation time set back to now - A, so the server answers what it would at age A (it derives the adaptive interval, and how far a reading is behind, from the id's creation time; the bench checks each answer against the mapping's PollIntervalAt at that age); the task's workflow runs until the bench signals it when a client's clock passes the task's length. The process has no read budget (its bucket refills in real time). One pass (no repetitions).")
	return nil
}

// curveLabel describes tool's polling curve in the mapping's terms.
func curveLabel(tool *mapping.Tool) string {
	return fmt.Sprintf("pollInterval %s until the task is %s old, then %s x age / %s, at most %s", tool.PollInterval,
		tool.PollIntervalGrowsAfter, tool.PollInterval, tool.PollIntervalGrowsAfter, tool.PollIntervalMax)
}

func simLength(d time.Duration) string {
	if d >= time.Hour && d%time.Hour == 0 {
		return fmt.Sprintf("%d-hour", d/time.Hour)
	}
	if d >= time.Minute && d%time.Minute == 0 {
		return fmt.Sprintf("%d-minute", d/time.Minute)
	}
	return d.String()
}

// finish signals a BenchHold workflow and waits until the engine shows it closed.
func (b *bench) finish(ctx context.Context, r adapters.Ref) error {
	id, run := workflowOf(r)
	if err := b.tc.SignalWorkflow(ctx, id, run, "finish", nil); err != nil {
		return fmt.Errorf("finishing the simulated task: %w", err)
	}
	for deadline := time.Now().Add(time.Minute); ; {
		st, err := b.describeTemporal(ctx, r)
		if err != nil {
			return err
		}
		if st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("the simulated task's workflow did not finish within a minute of its signal: is the bench's worker running?")
		}
		sleep(ctx, 10*time.Millisecond)
	}
}

// curvePolls is the number of polls of a client that polls a task of the given length at the
// intervals of tool.PollIntervalAt, the last one finding it ended.
func curvePolls(tool *mapping.Tool, length time.Duration) int {
	polls := 1
	for age := time.Duration(0); age < length; age += tool.PollIntervalAt(age) {
		polls++
	}
	return polls
}

// simulate polls a task through taskgate over its simulated life: every fixed interval, or (fixed
// 0) after the pollIntervalMs of each answer, which must be tool.PollIntervalAt of the age the
// task had when the server read it (at most a second of real time after the simulated age).
func (b *bench) simulate(ctx context.Context, client *mcpclient.Client, cl token.Claims, fixed time.Duration, tool *mapping.Tool) (simPoller, error) {
	var p simPoller
	var age, gap time.Duration
	finished := false
	for {
		if !finished && age >= b.opts.economyTask {
			if err := b.finish(ctx, cl.Ref); err != nil {
				return p, err
			}
			finished = true
		}
		id := b.tokens.Issue(token.Claims{Tool: cl.Tool, Ref: cl.Ref, Caller: cl.Caller, Created: time.Now().Add(-age)})
		a, err := get(ctx, client, id, "")
		if err != nil {
			return p, err
		}
		p.polls++
		if a.Status != "working" {
			if a.Status != "completed" || !finished {
				return p, fmt.Errorf("the simulated task ended %s at simulated age %s, want completed at %s", a.Status, age, b.opts.economyTask)
			}
			return p, nil
		}
		// A reading made before the end answers until the curve's interval has passed.
		if finished && age > b.opts.economyTask+tool.PollIntervalMax+time.Second {
			return p, fmt.Errorf("the simulated task is still working %s after its workflow closed, longer than the longest interval", age-b.opts.economyTask)
		}
		gap = fixed
		if gap == 0 {
			if a.PollIntervalMs <= 0 {
				return p, fmt.Errorf("tasks/get answered no pollIntervalMs: %+v", a)
			}
			gap = time.Duration(a.PollIntervalMs) * time.Millisecond
			if lo, hi := tool.PollIntervalAt(age), tool.PollIntervalAt(age+time.Second); gap < lo || gap > hi {
				return p, fmt.Errorf("tasks/get at simulated age %s answered pollIntervalMs %d, not the mapping's %s (up to %s)", age, a.PollIntervalMs, lo, hi)
			}
		}
		p.intervals = append(p.intervals, gap)
		age += gap
	}
}

// simulateDirect polls the engine directly every interval of simulated time until the workflow
// has closed, then reads its result: what a client without taskgate does.
func (b *bench) simulateDirect(ctx context.Context, r adapters.Ref, interval time.Duration) (simPoller, error) {
	var p simPoller
	finished := false
	for age := time.Duration(0); ; age += interval {
		if !finished && age >= b.opts.economyTask {
			if err := b.finish(ctx, r); err != nil {
				return p, err
			}
			finished = true
		}
		st, err := b.describeTemporal(ctx, r)
		if err != nil {
			return p, err
		}
		p.polls++
		p.calls++
		if st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			id, run := workflowOf(r)
			_, err := b.tc.WorkflowService().GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
				Namespace: namespace(), Execution: &commonpb.WorkflowExecution{WorkflowId: id, RunId: run},
				HistoryEventFilterType: enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT})
			p.calls++
			return p, err
		}
		if finished {
			return p, errors.New("the directly polled workflow still runs after it closed")
		}
	}
}
