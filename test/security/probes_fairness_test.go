package security

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgate/taskgate/internal/testenv"
)

// The probes' read budget, the pace and length of alice's floods, and how long bob waits.
const (
	budgetYAML     = "    budget: {readsPerSecond: 5, burst: 5}\n"
	pollsPerSecond = 50
	floodFor       = 15 * time.Second
	// patience is the longest bob waits to see one of his tasks end.
	patience = 10 * time.Second
	// slack absorbs the noise of a loaded 2-core machine in "within twice the normal time".
	slack = 500 * time.Millisecond
	// recoveryWindow is how soon after a flood bob's tasks must be seen ended in time again.
	recoveryWindow = 5 * time.Second
	listenedIDs    = 1000
	listenEvery    = 2500 * time.Millisecond
	ownTasks       = 30
)

// TestProbesFairness probes the finding on made-up native ids that spend everyone's read budget:
// while alice floods a block with a small budget, by made-up ids (polls and listens) and by polls
// of her own running tasks, bob's tasks are seen ended within twice their normal time, and the
// made-up ids' effect ends within seconds of their flood.
func TestProbesFairness(t *testing.T) {
	testenv.TemporalAddress(t)
	bin := binary(t)
	r := &results{}
	defer func() { t.Logf("taskgate %s:\n%s", bin, r.table()) }()
	dir := writeBudgeted(t)
	start := func(ops string) *dev {
		return startDev(t, bin, dir, "--token-format", "native", "--polls-per-second", strconv.Itoa(pollsPerSecond), "--ops-http", ops)
	}

	ops := freeAddr(t)
	d := start(ops)
	normal := bobsEnds(t, d, 5, 0)
	if len(normal.seen) < 5 {
		t.Fatalf("bob's tasks, with no flood: %s; %s", normal, strings.Join(normal.missedBy, "; "))
	}
	madeUpFlood(t, r, d, ops, normal)

	// Another process: the first flood's effect, if it lasts, is not this one's.
	ops = freeAddr(t)
	ownTasksFlood(t, r, start(ops), ops, normal)
}

// writeBudgeted writes the mapping of these probes: the local Temporal server at a small read
// budget, and a tool anyone may call, on a task queue the test serves.
func writeBudgeted(t *testing.T) string {
	t.Helper()
	return writeTools(t, budgetYAML, "", `  - name: wait_and_echo
    description: Waits, then echoes the text.
    engine: local-temporal
    workflow: {type: WaitAndEcho, taskQueue: `+ownQueue(t)+`}
    pollInterval: 500ms
    inputSchema: {type: object, properties: {seconds: {type: number}, text: {type: string}}, required: [seconds, text]}
`)
}

// ends are how long bob's tasks took to be seen ended, one after another, each waited on for at
// most wait; missed counts those not seen by then.
type ends struct {
	wait   time.Duration
	seen   []time.Duration
	missed int
	// missedBy says, for each missed task, what the engine held of it when its wait ended.
	missedBy []string
}

// median is the middle of the ends, a missed one counting as wait.
func (e ends) median() time.Duration {
	all := slices.Clone(e.seen)
	for range e.missed {
		all = append(all, e.wait)
	}
	if len(all) == 0 {
		return e.wait
	}
	slices.Sort(all)
	return all[len(all)/2]
}

func (e ends) String() string {
	var each []string
	for _, d := range e.seen {
		each = append(each, fmt.Sprintf("%.1f", d.Seconds()))
	}
	if e.missed > 0 {
		each = append(each, fmt.Sprintf("%d not seen within %s", e.missed, seconds(e.wait)))
	}
	return fmt.Sprintf("median %s of %d (%s)", seconds(e.median()), len(e.seen)+e.missed, strings.Join(each, ", "))
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// bound is how long bob's tasks may take to be seen ended under a flood: twice their normal time.
func bound(normal ends) time.Duration { return 2*normal.median() + slack }

// bobsEnds runs bob's 1 s tasks one after another, n of them, or as many as start within span.
func bobsEnds(t *testing.T, d *dev, n int, span time.Duration) ends {
	e := ends{wait: patience}
	for began := time.Now(); len(e.seen)+e.missed < n || time.Since(began) < span; {
		if took, id, ok := endSeen(t, d, e.wait); ok {
			e.seen = append(e.seen, took)
		} else {
			e.missed++
			e.missedBy = append(e.missedBy, engineHeld(t, id))
		}
	}
	return e
}

// endSeen starts bob's 1 s task and listens on it: how long from the start's answer until a
// notification shows it completed, within wait, and the task's id.
func endSeen(t *testing.T, d *dev, wait time.Duration) (time.Duration, string, bool) {
	id := modernStart(t, d, bobKey, "wait_and_echo", map[string]any{"seconds": 1, "text": "bob's"})
	started := time.Now()
	ctx, cancel := context.WithDeadline(context.Background(), started.Add(wait))
	defer cancel()
	_, events := openListen(ctx, t, d, bobKey, []string{id})
	for e := range events {
		var m struct {
			Method string
			Params struct{ Status string }
		}
		if json.Unmarshal([]byte(e.msg), &m); m.Method == "notifications/tasks" && m.Params.Status == "completed" {
			return e.at.Sub(started), id, true
		}
	}
	return wait, id, false
}

// madeUpFlood: alice makes up ids of her own shape and, for floodFor, polls them at her rate limit
// and listens on 1,000 more every listenEvery; bob's tasks are seen ended in time while she does,
// and soon after she stops.
func madeUpFlood(t *testing.T, r *results, d *dev, ops string, normal ends) {
	hers := startTask(t, d.url, aliceKey, "wait_and_echo", map[string]any{"seconds": 0, "text": "alice's"})
	// Its end read before the flood, her task costs no read while bob's are timed.
	if a := must(t, d.url, aliceKey, rpc("tasks/result", map[string]any{"taskId": hers})); !a.served() {
		t.Fatalf("the result of alice's task: %s", a)
	}
	polled := madeUpLike(t, hers, pollsPerSecond*int((floodFor+patience+time.Second)/time.Second))
	var listened [][]string
	for range int((floodFor+patience)/listenEvery) + 1 {
		listened = append(listened, madeUpLike(t, hers, listenedIDs))
	}

	before := budgetAt(t, ops)
	ctx, stop := context.WithCancel(context.Background())
	var flood sync.WaitGroup
	var sent, listens atomic.Int64
	flood.Go(func() { pollAtRate(ctx, d, polled, &sent) })
	flood.Go(func() { listenEach(ctx, d, listened, &listens) })
	during := bobsEnds(t, d, 1, floodFor)
	stop()
	flood.Wait()
	stopped := time.Now()
	spent := budgetAt(t, ops).since(before)

	r.add(t, "fair budget", fmt.Sprintf("budget 5 reads/s: for %s alice polls made-up ids of her shape at her rate limit (%d/s) and listens on %d more every %s; bob's 1 s tasks, each listened on",
		seconds(floodFor), pollsPerSecond, listenedIDs, seconds(listenEvery)),
		fmt.Sprintf("bob's median end seen within 2x his normal time + %s", seconds(slack)),
		fmt.Sprintf("normal %s; flooded %s (bound %s); alice sent %d polls and %d listens; %s",
			normal, during, seconds(bound(normal)), sent.Load(), listens.Load(), spent),
		during.median() <= bound(normal))

	after, tries := recovery(t, d, bound(normal), stopped)
	seen := fmt.Sprintf("none of %d tasks started in the %s after (%s)", len(tries.seen)+tries.missed, seconds(recoveryWindow), tries)
	if after >= 0 {
		seen = fmt.Sprintf("a task started %s after the flood seen ended in %s (%s)", seconds(after), seconds(tries.seen[len(tries.seen)-1]), tries)
	}
	r.add(t, "fair budget", "after alice's flood of made-up ids stops, bob's next 1 s tasks",
		fmt.Sprintf("one started within %s of the flood seen ended within %s", seconds(recoveryWindow), seconds(bound(normal))), seen, after >= 0)
}

// recovery runs bob's tasks one after another, each waited on for at most within, until one is
// seen ended within it or recoveryWindow has passed since stopped: how long after stopped that
// one started (-1 when none did), and the ends of all it ran.
func recovery(t *testing.T, d *dev, within time.Duration, stopped time.Time) (time.Duration, ends) {
	tries := ends{wait: within}
	for time.Since(stopped) < recoveryWindow {
		began := time.Since(stopped)
		if took, _, ok := endSeen(t, d, within); ok {
			tries.seen = append(tries.seen, took)
			return began, tries
		}
		tries.missed++
	}
	return -1, tries
}

// pollAtRate has alice read ids (tasks/get) at pollsPerSecond until ctx ends or the ids run out;
// sent counts the polls. Her clients are enough to keep the pace while each poll takes up to 2 s
// (a poll that waits for the budget).
func pollAtRate(ctx context.Context, d *dev, ids []string, sent *atomic.Int64) {
	pace := time.NewTicker(time.Second / pollsPerSecond)
	defer pace.Stop()
	var next atomic.Int64
	var clients sync.WaitGroup
	for range 2 * pollsPerSecond {
		clients.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(ids)); i = next.Add(1) - 1 {
				select {
				case <-ctx.Done():
					return
				case <-pace.C:
				}
				post(ctx, d.url, aliceKey, rpc("tasks/get", map[string]any{"taskId": ids[i]}))
				sent.Add(1)
			}
		})
	}
	clients.Wait()
}

// listenEach has alice open a listen on each list of ids, one every listenEvery, held open until
// ctx ends; listens counts them.
func listenEach(ctx context.Context, d *dev, lists [][]string, listens *atomic.Int64) {
	meta, h := modern("subscriptions/listen", "")
	every := time.NewTicker(listenEvery)
	defer every.Stop()
	var open sync.WaitGroup
	defer open.Wait()
	for _, ids := range lists {
		body := rpc("subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": ids}, "_meta": meta})
		open.Go(func() { post(ctx, d.url, aliceKey, body, h[:4]...) })
		listens.Add(1)
		select {
		case <-ctx.Done():
			return
		case <-every.C:
		}
	}
}

// budgetSeen is what an engine block's budget saw: the reads of executions made, and those it
// refused.
type budgetSeen struct{ reads, refused int }

// budgetAt is the budget's counts in the metrics at ops.
func budgetAt(t *testing.T, ops string) budgetSeen {
	return budgetSeen{executionReads(t, ops), int(scrape(t, ops)["taskgate_engine_read_refusals_total"])}
}

// since says what the budget saw since before.
func (b budgetSeen) since(before budgetSeen) string {
	return fmt.Sprintf("%d engine reads of executions, %d refused by the budget", b.reads-before.reads, b.refused-before.refused)
}

// ownTasksFlood: alice starts ownTasks running tasks and, for floodFor, polls them round robin at
// her rate limit; bob's tasks are seen ended in time while she does.
func ownTasksFlood(t *testing.T, r *results, d *dev, ops string, normal ends) {
	hers := startOwnTasks(t, d)
	before := budgetAt(t, ops)
	ctx, stop := context.WithCancel(context.Background())
	polled := slices.Repeat(hers, pollsPerSecond*int((floodFor+patience)/time.Second)/len(hers)+1)
	var flood sync.WaitGroup
	var sent atomic.Int64
	flood.Go(func() { pollAtRate(ctx, d, polled, &sent) })
	during := bobsEnds(t, d, 1, floodFor)
	stop()
	flood.Wait()
	spent := budgetAt(t, ops).since(before)

	r.add(t, "fair budget", fmt.Sprintf("budget 5 reads/s: for %s alice polls %d running tasks of hers at her rate limit (%d/s); bob's 1 s tasks, each listened on",
		seconds(floodFor), len(hers), pollsPerSecond),
		fmt.Sprintf("bob's median end seen within 2x his normal time + %s", seconds(slack)),
		fmt.Sprintf("normal %s; flooded %s (bound %s); alice sent %d polls; %s",
			normal, during, seconds(bound(normal)), sent.Load(), spent),
		during.median() <= bound(normal))
}

// startOwnTasks starts alice's ownTasks tasks, long enough to run through the flood, at her rate
// limit of calls (10 a second); they are cancelled when the test ends.
func startOwnTasks(t *testing.T, d *dev) []string {
	pace := time.NewTicker(100 * time.Millisecond)
	defer pace.Stop()
	var ids []string
	for i := range ownTasks {
		<-pace.C
		ids = append(ids, startTask(t, d.url, aliceKey, "wait_and_echo", map[string]any{"seconds": 120, "text": "alice's " + strconv.Itoa(i)}))
	}
	t.Cleanup(func() {
		for _, id := range ids {
			post(context.Background(), d.url, aliceKey, rpc("tasks/cancel", map[string]any{"taskId": id}))
		}
	})
	return ids
}
