package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/temporal"
	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
	"github.com/taskgate/taskgate/test/apifaults"
)

// budgetEnv is taskgate in front of the Temporal server through a proxy that can throttle, with a
// tool whose workflows stay in flight (no worker polls their queue) and a small read budget.
type budgetEnv struct {
	proxy  *apifaults.Temporal
	set    *mapping.Set
	engine adapters.Conn
	tokens token.Codec
	// log, when set, is the servers' logger.
	log *slog.Logger
}

func newBudgetEnv(t *testing.T, budget string) *budgetEnv {
	t.Helper()
	p, err := apifaults.NewTemporal(testenv.TemporalAddress(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	t.Setenv("TEMPORAL_ADDRESS", p.Address())
	set, err := mapping.Parse("budget.yaml", []byte(`
engines:
  t: {temporal: {address: "${TEMPORAL_ADDRESS}"}, budget: `+budget+`}
tools:
  - name: hold
    description: Stays in flight.
    engine: t
    workflow: {type: WaitAndEcho, taskQueue: taskgate-budget-unpolled-`+uuid.NewString()+`}
    inputSchema: {type: object}
`))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := temporal.New(t.Context(), temporal.Config{Address: p.Address()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	keys, _ := token.ParseKeys(token.NewKey("b1"))
	tokens, _ := token.NewSealed(keys)
	return &budgetEnv{proxy: p, set: set, engine: eng, tokens: tokens}
}

// serve is one taskgate process (a replica: several share the engine and the keys), and its task
// service.
func (e *budgetEnv) serve(t *testing.T) (*tasks.Service, *rpctest.Client) {
	t.Helper()
	srv, svc := newServer(t, tasks.Config{Mapping: e.set, Engines: map[string]adapters.Conn{"t": e.engine}, Tokens: e.tokens}, mcpserver.Config{Logger: e.log})
	if _, err := svc.CheckTargets(t.Context()); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(hs.Close)
	return svc, rpctest.Modern(rpctest.HTTP{URL: hs.URL}, ext)
}

// pollAll polls every task every 100 ms for d, as clients that ignore pollIntervalMs do, and
// checks every answer: working, as of a lastUpdatedAt never in the future. It returns the longest
// pollIntervalMs it was told and the oldest answer's age.
func pollAll(t *testing.T, c *rpctest.Client, ids []string, d time.Duration) (maxInterval, oldest time.Duration) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
				raw, rerr := c.Call(t, "tasks/get", map[string]any{"taskId": id})
				if rerr != nil {
					t.Errorf("tasks/get: %v", rerr)
					return
				}
				var got struct {
					Status         string
					LastUpdatedAt  time.Time
					PollIntervalMs int64
				}
				mustUnmarshal(t, raw, &got)
				age := time.Since(got.LastUpdatedAt)
				if got.Status != "working" || age < -time.Second {
					t.Errorf("tasks/get: %s", raw)
					return
				}
				mu.Lock()
				maxInterval, oldest = max(maxInterval, time.Duration(got.PollIntervalMs)*time.Millisecond), max(oldest, age)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return maxInterval, oldest
}

// Six tasks polled every 100 ms cost the engine what the read budget allows (2 reads a second, 2
// at once), not 60 reads a second; every poll is answered, from the newest reading with its time,
// and the interval clients are told grows so that the tasks' share fits the budget.
func TestReadsStayWithinTheBudgetWhateverClientsDo(t *testing.T) {
	e := newBudgetEnv(t, "{readsPerSecond: 2, burst: 2}")
	svc, c := e.serve(t)
	ids := make([]string, 6)
	for i := range ids {
		ids[i] = call(t, c, "hold", map[string]any{"seconds": 3600, "text": "x"})["taskId"].(string)
		ref := e.ref(t, ids[i])
		defer e.engine.Cancel(context.WithoutCancel(t.Context()), e.set.Tools[0].Target, ref, "test over")
	}
	before := e.proxy.Calls("DescribeWorkflowExecution")
	t0 := time.Now()
	told, oldest := pollAll(t, c, ids, 5*time.Second)
	took := time.Since(t0)
	reads := e.proxy.Calls("DescribeWorkflowExecution") - before
	t.Logf("%s of polls every 100ms of 6 tasks: %d engine reads, longest pollIntervalMs %s, oldest answer %s; budget %+v",
		took.Round(time.Millisecond), reads, told, oldest.Round(time.Millisecond), svc.Budgets()["t"])
	if limit := int64(2*took.Seconds()) + 2; reads > limit {
		t.Errorf("%d engine reads in %s, over the budget's %d", reads, took.Round(time.Millisecond), limit)
	}
	// Six tasks wanting a read a second each, against 90% of 2 a second: readings last about 3.3s.
	if told < 2*time.Second {
		t.Errorf("the longest pollIntervalMs told was %s, want it grown past the curve's 1s with the load", told)
	}
	if s := svc.Budgets()["t"]; s.Stretch < 2 || s.Running != 6 || s.Throttled != 0 {
		t.Errorf("budget stats %+v, want a load above 2 over 6 running tasks", s)
	}
	if r := svc.Reads()["t"].Describe; r.Stale == 0 {
		t.Errorf("reads %+v: want some answered past the curve (stale)", r)
	}
}

// When the engine throttles half of the reads, clients still get every poll answered, from the
// newest reading; the budget's rate shrinks.
func TestThrottlingIsAnsweredFromTheNewestReading(t *testing.T) {
	e := newBudgetEnv(t, "{readsPerSecond: 5, burst: 5}")
	svc, c := e.serve(t)
	ids := make([]string, 4)
	for i := range ids {
		ids[i] = call(t, c, "hold", map[string]any{"seconds": 3600, "text": "x"})["taskId"].(string)
		defer e.engine.Cancel(context.WithoutCancel(t.Context()), e.set.Tools[0].Target, e.ref(t, ids[i]), "test over")
	}
	e.proxy.Throttle(0.5, "DescribeWorkflowExecution")
	pollAll(t, c, ids, 4*time.Second)
	s := svc.Budgets()["t"]
	t.Logf("budget stats after polling through a proxy throttling half the reads: %+v; reads %+v", s, svc.Reads()["t"].Describe)
	if s.Throttled == 0 || int64(s.Throttled) != e.proxy.Throttled("DescribeWorkflowExecution") || s.Rate >= 5 {
		t.Errorf("budget stats %+v with %d reads throttled by the engine: want them all counted, and the rate below 5", s, e.proxy.Throttled("DescribeWorkflowExecution"))
	}
}

// A task with no reading in this process (started through another replica) and no token left
// waits a little, then is answered as its id says it started: working as of its creation, with a
// message that says why and a poll interval that says when to come back. Nothing else is known of it for
// sure, and an error would have every client retry.
func TestNoReadingAndNoTokenAnswersAsStarted(t *testing.T) {
	e := newBudgetEnv(t, "{readsPerSecond: 0.1, burst: 1}")
	c, unread := e.unreadSecond(t)
	t0 := time.Now()
	var got struct {
		Status, StatusMessage string
		CreatedAt             time.Time
		LastUpdatedAt         time.Time
		PollIntervalMs        int64
	}
	raw, rerr := c.Call(t, "tasks/get", map[string]any{"taskId": unread})
	if rerr != nil {
		t.Fatalf("a read with no reading and no token: %v", rerr)
	}
	mustUnmarshal(t, raw, &got)
	if got.Status != "working" || !got.LastUpdatedAt.Equal(got.CreatedAt) || got.PollIntervalMs < 2000 {
		t.Errorf("a read with no reading and no token: %+v, want working as of its creation, polled again in 2 s or more", got)
	}
	if want := regexp.MustCompile(`^Started; not read since, as the engine is being read as fast as taskgate may: poll again in [0-9.]+s\.$`); !want.MatchString(got.StatusMessage) {
		t.Errorf("statusMessage %q, want it to match %s", got.StatusMessage, want)
	}
	if took := time.Since(t0); took > 3*time.Second {
		t.Errorf("the read took %s: a token further than the 2s a read may wait should be answered at once", took)
	}
}

// With native ids, which do not say when their task was created, a task with no reading and no
// token left waits a little, then gets a retryable error that says when to come back.
func TestNoReadingAndNoTokenIsRetryableByNativeID(t *testing.T) {
	e := newBudgetEnv(t, "{readsPerSecond: 0.1, burst: 1}")
	e.tokens = token.Native{Refs: e.set}
	var logged syncBuffer
	e.log = slog.New(slog.NewTextHandler(&logged, nil))
	c, unread := e.unreadSecond(t)
	t0 := time.Now()
	_, rerr := c.Call(t, "tasks/get", map[string]any{"taskId": unread})
	var data struct {
		Retryable    bool
		RetryAfterMs int64
		ErrorID      string
	}
	if rerr == nil || rerr.Code != -32603 || json.Unmarshal(rerr.Data, &data) != nil || !data.Retryable || data.RetryAfterMs < 2000 {
		t.Fatalf("a read with no reading and no token: %v, want a retryable -32603 with retryAfterMs", rerr)
	}
	want := regexp.MustCompile(`^Failed to retrieve the task: the engine is being read as fast as taskgate may; the task is unchanged, retry in [0-9.]+s \(error id ` + data.ErrorID + `\)$`)
	if !want.MatchString(rerr.Message) {
		t.Errorf("message %q, want it to match %s", rerr.Message, want)
	}
	if took := time.Since(t0); took > 3*time.Second {
		t.Errorf("the refused read took %s: a token further than the 2s a read may wait should fail at once", took)
	}
	// Routine under load: logged as information, not as an error.
	if line := regexp.MustCompile(`(?m)^.*errorId=` + data.ErrorID + `.*$`).FindString(logged.String()); !strings.Contains(line, "level=INFO") {
		t.Errorf("the refusal's log line %q, want level=INFO", line)
	}
}

// unreadSecond starts two tasks that stay in flight through one replica (cancelled when the test
// ends) and reads the first through another, with the budget's one token: that replica's client,
// and the second task, which it never read.
func (e *budgetEnv) unreadSecond(t *testing.T) (*rpctest.Client, string) {
	t.Helper()
	_, starter := e.serve(t)
	_, c := e.serve(t)
	var ids []string
	for range 2 {
		id := call(t, starter, "hold", map[string]any{"seconds": 3600, "text": "x"})["taskId"].(string)
		t.Cleanup(func() {
			e.engine.Cancel(context.WithoutCancel(t.Context()), e.set.Tools[0].Target, e.ref(t, id), "test over")
		})
		ids = append(ids, id)
	}
	if got := c.Decode(t, "tasks/get", map[string]any{"taskId": ids[0]}); got["status"] != "working" {
		t.Fatalf("the first read, with the budget's one token: %v", got)
	}
	return c, ids[1]
}

func (e *budgetEnv) ref(t *testing.T, id string) adapters.Ref {
	t.Helper()
	if _, native := e.tokens.(token.Native); native {
		r, err := e.set.Tools[0].ParseRef(id)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	c, err := e.tokens.Open(id, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return c.Ref
}

// A poll answered from a reading says when the reading was made (lastUpdatedAt), and the engine is
// read again once the poll interval has passed.
func TestAnswersCarryTheTimeOfTheirReading(t *testing.T) {
	e := newBudgetEnv(t, "unlimited")
	_, c := e.serve(t)
	id := call(t, c, "hold", map[string]any{"seconds": 3600, "text": "x"})["taskId"].(string)
	defer e.engine.Cancel(context.WithoutCancel(t.Context()), e.set.Tools[0].Target, e.ref(t, id), "test over")
	get := func() (time.Time, int64) {
		var got struct {
			LastUpdatedAt  time.Time
			PollIntervalMs int64
		}
		raw, rerr := c.Call(t, "tasks/get", map[string]any{"taskId": id})
		if rerr != nil {
			t.Fatal(rerr)
		}
		mustUnmarshal(t, raw, &got)
		return got.LastUpdatedAt, got.PollIntervalMs
	}
	time.Sleep(1100 * time.Millisecond) // past the start's own reading
	before := e.proxy.Calls("DescribeWorkflowExecution")
	first, interval := get()
	again, _ := get()
	if n := e.proxy.Calls("DescribeWorkflowExecution") - before; n != 1 || !again.Equal(first) || time.Since(first) > time.Second {
		t.Errorf("two polls within the interval: %d engine reads, lastUpdatedAt %s then %s; want one read, both as of it", n, first, again)
	}
	time.Sleep(time.Duration(interval) * time.Millisecond)
	if later, _ := get(); !later.After(first) || e.proxy.Calls("DescribeWorkflowExecution")-before != 2 {
		t.Errorf("a poll after the interval (%dms): lastUpdatedAt %s, want a new reading after %s", interval, later, first)
	}
}

// syncBuffer is a bytes.Buffer that handlers on several goroutines may write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
