package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/google/uuid"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
	"github.com/taskgate/taskgate/adapters/temporal"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/internal/mcpclient"
	"github.com/taskgate/taskgate/tasks/token"
)

// The bench's tools (tools.yaml) and what they start.
const (
	toolRunning    = "bench_running"      // Temporal, a queue no worker polls: stays in flight
	toolEcho       = "bench_echo"         // Temporal, the bench's own worker: ends
	toolSFN        = "bench_sfn_echo"     // Step Functions wait-and-echo
	toolRestate    = "bench_restate_echo" // the Restate example WaitAndEcho
	toolHold       = "bench_hold"         // Temporal, the bench's own worker: ends when signalled
	unpolledQueue  = "taskgate-bench-unpolled"
	workerQueue    = "taskgate-bench-worker"
	extTasks       = "io.modelcontextprotocol/tasks"
	sfnMachineName = sfnexamples.WaitAndEcho
)

// bench holds what every figure shares: the direct engine clients, the token keys the taskgate
// processes share with it, the load generator's HTTP client, and what must be cleaned up.
type bench struct {
	opts options
	log  io.Writer
	res  *results
	// tc is the direct Temporal client: the SDK's own, with its default options (as a program
	// that calls Temporal without taskgate has it), whatever taskgate's adapter sets.
	tc client.Client
	// se is taskgate's Step Functions driver, and sc its client (through As).
	se       adapters.Conn
	sc       *sfn.Client
	sfnARN   string
	restate  restateServer
	keys     string
	tokens   *token.Sealed
	http     *http.Client
	dc       converter.DataConverter
	children []*child
	profiles map[string][]string

	temporalPID, sfnPID int
	// stopProxies closes the proxies that put the engines at a distance (-engine-latency).
	stopProxies func()

	workerOnce sync.Once
	worker     worker.Worker
	workerTC   client.Client
	workerErr  error

	// running are ids of Temporal tasks in flight, started through taskgate (see runningTasks).
	running []string

	mu       sync.Mutex
	cleanupT []adapters.Ref
	cleanupS []string
	cleanupR []string
}

func newBench(ctx context.Context, opts options, log io.Writer) (*bench, error) {
	temporalAddr, sfnEndpoint := os.Getenv("TEMPORAL_ADDRESS"), os.Getenv("SFN_ENDPOINT")
	if temporalAddr == "" || sfnEndpoint == "" {
		return nil, fmt.Errorf("TEMPORAL_ADDRESS and SFN_ENDPOINT must name running engines: run ./scripts/with-engines go run ./test/bench")
	}
	b := &bench{opts: opts, log: log, res: newResults(), http: newHTTPClient(), dc: converter.GetDefaultDataConverter(),
		profiles: map[string][]string{}}
	b.temporalPID, b.sfnPID = listener(temporalAddr), listener(sfnEndpoint)
	var err error
	if opts.engineLatency > 0 {
		if b.stopProxies, err = atDistance(opts.engineLatency); err != nil {
			return nil, err
		}
		temporalAddr, sfnEndpoint = os.Getenv("TEMPORAL_ADDRESS"), os.Getenv("SFN_ENDPOINT")
	}
	if b.tc, err = dialTemporal(ctx, temporalAddr); err != nil {
		return nil, err
	}
	if b.se, err = stepfunctions.New(ctx, stepfunctions.Config{Region: region(), Endpoint: sfnEndpoint}); err != nil {
		return nil, err
	}
	driver.As(b.se, &b.sc)
	arns, err := sfnexamples.Ensure(ctx, b.sc, "arn:aws:iam::123456789012:role/taskgate-examples")
	if err != nil {
		return nil, fmt.Errorf("creating the example state machines: %w", err)
	}
	b.sfnARN = arns[sfnMachineName]
	if opts.engines["restate"] {
		if b.restate, err = restateFromEnv(b.http); err != nil {
			return nil, err
		}
	}
	b.keys = token.NewKey("bench")
	keys, err := token.ParseKeys(b.keys)
	if err != nil {
		return nil, err
	}
	if b.tokens, err = token.NewSealed(keys); err != nil {
		return nil, err
	}
	return b, nil
}

// dialTemporal is a Temporal SDK client with its default options but a quieter log.
func dialTemporal(ctx context.Context, address string) (client.Client, error) {
	c, err := client.DialContext(ctx, client.Options{HostPort: address, Namespace: namespace(),
		Logger: tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))})
	if err != nil {
		return nil, fmt.Errorf("connecting to Temporal at %s: %w", address, err)
	}
	return c, nil
}

func namespace() string {
	if ns := os.Getenv("TEMPORAL_NAMESPACE"); ns != "" {
		return ns
	}
	return "default"
}

func region() string {
	if r := os.Getenv("AWS_REGION"); r != "" {
		return r
	}
	return "us-east-1"
}

func numCPU() int { return runtime.NumCPU() }

func (b *bench) logf(format string, args ...any) { fmt.Fprintf(b.log, format+"\n", args...) }

// close stops the taskgate processes and the worker, and ends every execution the bench started.
func (b *bench) close() {
	b.stopChildren()
	for _, id := range b.running {
		if ref, err := b.ref(id); err == nil {
			b.remember(ref)
		}
	}
	if b.worker != nil {
		b.worker.Stop()
		b.workerTC.Close()
	}
	b.cleanup()
	b.tc.Close()
	if b.stopProxies != nil {
		b.stopProxies()
	}
}

func (b *bench) stopChildren() {
	for _, c := range b.children {
		b.stopChild(c)
	}
	b.children = nil
}

// finishProfiles names the single profile of a kind FILE itself, and says where the profiles are.
func (b *bench) finishProfiles() {
	for kind, base := range map[string]string{"cpu": b.opts.cpuProfile, "mem": b.opts.memProfile} {
		files := b.profiles[kind]
		if len(files) == 1 {
			if err := os.Rename(files[0], base); err == nil {
				files[0] = base
			}
		}
		for _, f := range files {
			b.logf("bench: %s profile of the taskgate side: %s (go tool pprof -top %s)", kind, f, f)
		}
	}
}

// remember records executions to end when the bench ends.
func (b *bench) remember(refs ...adapters.Ref) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range refs {
		switch {
		case strings.HasPrefix(r.ID, "arn:"):
			b.cleanupS = append(b.cleanupS, r.ID)
		case isRestate(r):
			b.cleanupR = append(b.cleanupR, invocationOf(r))
		default:
			b.cleanupT = append(b.cleanupT, r)
		}
	}
}

// cleanup terminates the Temporal workflows, stops the Step Functions executions and kills the
// Restate invocations the bench started (those that already ended answer an error, which is
// ignored).
func (b *bench) cleanup() {
	b.mu.Lock()
	tw, sx, ri := b.cleanupT, b.cleanupS, b.cleanupR
	b.cleanupT, b.cleanupS, b.cleanupR = nil, nil, nil
	b.mu.Unlock()
	if len(tw)+len(sx)+len(ri) == 0 {
		return
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	parallel(len(tw), 32, func(i int) error {
		id, run := workflowOf(tw[i])
		b.tc.TerminateWorkflow(ctx, id, run, "taskgate bench done")
		return nil
	})
	parallel(len(sx), 16, func(i int) error {
		b.sc.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(sx[i])})
		return nil
	})
	parallel(len(ri), 16, func(i int) error {
		b.killRestate(ctx, ri[i])
		return nil
	})
	b.logf("  ended %d Temporal workflows, %d Step Functions executions and %d Restate invocations in %s", len(tw), len(sx), len(ri), time.Since(start).Round(time.Millisecond))
}

// ensureWorker runs a worker for the queue of the bench_echo and bench_hold tools in the bench
// process (for tasks that must end). It polls on a connection of its own.
func (b *bench) ensureWorker(ctx context.Context) error {
	b.workerOnce.Do(func() {
		b.workerTC, b.workerErr = dialTemporal(ctx, os.Getenv("TEMPORAL_ADDRESS"))
		if b.workerErr != nil {
			return
		}
		// A workflow task that a busy machine keeps off the CPU for a second is no deadlock (the
		// SDK's default would fail it, and retry it after a timeout).
		b.worker = worker.New(b.workerTC, workerQueue, worker.Options{DeadlockDetectionTimeout: 30 * time.Second})
		temporalexamples.Register(b.worker)
		b.worker.RegisterWorkflowWithOptions(benchHold, workflow.RegisterOptions{Name: "BenchHold"})
		registerPlatformWorkflows(b.worker, b.opts.platform.workflowTypes())
		b.workerErr = b.worker.Start()
	})
	return b.workerErr
}

// parallel runs f(0..n-1) on at most workers goroutines and returns the first error.
func parallel(n, workers int, f func(i int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// Clients of one taskgate process.

// modern is a 2026-07-28 client that declares the tasks extension, over HTTP.
func (b *bench) modern(url string) *mcpclient.Client {
	return mcpclient.Modern(mcpclient.HTTP{URL: url, Client: b.http}, extTasks)
}

// answer is what the bench reads of the results it gets.
type answer struct {
	TaskID            string          `json:"taskId"`
	Status            string          `json:"status"`
	CreatedAt         time.Time       `json:"createdAt"`
	LastUpdatedAt     time.Time       `json:"lastUpdatedAt"`
	PollIntervalMs    int64           `json:"pollIntervalMs"`
	ResultType        string          `json:"resultType"`
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
}

// A request whose error taskgate marks retryable (data.retryable: the engine did not answer, a
// read budget is spent) is sent again, as a client does: after the error's retryAfterMs, or after
// a pause growing from 250 ms to 2 s when it names none, at most retryTries times and within
// retryFor; after that, or on any other error, the bench fails. A start sent again may have
// started an execution the first time as well: that one ends on its own, or with the engines.
const (
	retryTries = 8
	retryFor   = 2 * time.Minute
)

// retried counts the requests sent again, for the run's header.
var retried atomic.Int64

// call sends a request, again while its error is retryable (above), and decodes its answer.
func call(ctx context.Context, c *mcpclient.Client, method string, params map[string]any) (answer, error) {
	start, pause := time.Now(), 250*time.Millisecond
	for try := 1; ; try++ {
		a, err := callOnce(ctx, c, method, params)
		wait, ok := retryable(err)
		if !ok {
			return a, err
		}
		if wait == 0 {
			wait, pause = pause, min(2*pause, 2*time.Second)
		}
		if try == retryTries || time.Since(start)+wait > retryFor {
			return a, fmt.Errorf("%w (marked retryable, still failing after %d tries in %s)", err, try, time.Since(start).Round(time.Millisecond))
		}
		retried.Add(1)
		sleep(ctx, wait)
		if ctx.Err() != nil {
			return a, err
		}
	}
}

// retryable reports whether taskgate marked err retryable, and when it said to retry (0: it did
// not say).
func retryable(err error) (time.Duration, bool) {
	var rerr *mcpclient.Error
	if !errors.As(err, &rerr) {
		return 0, false
	}
	var data struct {
		Retryable    bool  `json:"retryable"`
		RetryAfterMs int64 `json:"retryAfterMs"`
	}
	if json.Unmarshal(rerr.Data, &data) != nil || !data.Retryable {
		return 0, false
	}
	return time.Duration(data.RetryAfterMs) * time.Millisecond, true
}

// callOnce sends a request once and decodes its answer; a JSON-RPC error is an error.
func callOnce(ctx context.Context, c *mcpclient.Client, method string, params map[string]any) (answer, error) {
	res, rerr, err := c.Call(ctx, method, params)
	if err != nil {
		return answer{}, err
	}
	if rerr != nil {
		return answer{}, fmt.Errorf("%s: %w", method, rerr)
	}
	var a answer
	if err := json.Unmarshal(res, &a); err != nil {
		return answer{}, fmt.Errorf("%s: %w: %s", method, err, res)
	}
	return a, nil
}

// start calls a tool as a task and returns the task id; its execution is ended at the next
// cleanup.
func (b *bench) start(ctx context.Context, c *mcpclient.Client, tool string, args map[string]any) (string, error) {
	return b.startTask(ctx, c, tool, args, true)
}

func (b *bench) startTask(ctx context.Context, c *mcpclient.Client, tool string, args map[string]any, remember bool) (string, error) {
	a, err := call(ctx, c, "tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil {
		return "", err
	}
	if a.ResultType != "task" || a.TaskID == "" {
		return "", fmt.Errorf("tools/call %s answered no task: %+v", tool, a)
	}
	ref, err := b.ref(a.TaskID)
	if err != nil {
		return "", err
	}
	if remember {
		b.remember(ref)
	}
	return a.TaskID, nil
}

// get polls a task with tasks/get and checks its status.
func get(ctx context.Context, c *mcpclient.Client, id, want string) (answer, error) {
	a, err := call(ctx, c, "tasks/get", map[string]any{"taskId": id})
	if err == nil && want != "" && a.Status != want {
		err = fmt.Errorf("tasks/get: status %q, want %q", a.Status, want)
	}
	return a, err
}

// ref opens a task id with the key the bench shares with its taskgate processes.
func (b *bench) ref(id string) (adapters.Ref, error) {
	c, err := b.tokens.Open(id, time.Now())
	return c.Ref, err
}

// runningTasks are n Temporal tasks in flight, started through c (any taskgate process opens
// them: they share the key) the first time they are asked for, and reused after: they are ended
// only when the bench ends.
func (b *bench) runningTasks(ctx context.Context, c *child, n int) ([]string, error) {
	if len(b.running) >= n {
		return b.running[:n], nil
	}
	more := n - len(b.running)
	start := time.Now()
	ids, err := b.startRunning(ctx, b.modern(c.endpoint()), more, false)
	if err != nil {
		return nil, err
	}
	b.running = append(b.running, ids...)
	b.logf("  started %d running tasks through %s in %s", more, c.label, time.Since(start).Round(time.Millisecond))
	return b.running[:n], nil
}

// startRunning starts n Temporal tasks that stay in flight (bench_running) through client, 16 at
// a time. remember: they are ended at the next cleanup; else only when the bench ends (the
// caller adds them to b.running).
func (b *bench) startRunning(ctx context.Context, client *mcpclient.Client, n int, remember bool) ([]string, error) {
	ids := make([]string, n)
	err := parallel(n, 16, func(i int) error {
		var err error
		ids[i], err = b.startTask(ctx, client, toolRunning, map[string]any{"seconds": 3 * 3600, "text": "in flight"}, remember)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("starting running tasks: %w", err)
	}
	return ids, nil
}

// Direct engine calls: what a client of the engine sends without taskgate.

// workflowOf is the workflow id and run id of a Temporal Ref.
func workflowOf(r adapters.Ref) (id, run string) {
	id, run, _ = temporal.WorkflowOf(r)
	return id, run
}

// describeTemporal is one DescribeWorkflowExecution RPC from the bench process.
func (b *bench) describeTemporal(ctx context.Context, r adapters.Ref) (enumspb.WorkflowExecutionStatus, error) {
	return describeWorkflow(ctx, b.tc, r)
}

// describeSFN is one DescribeExecution call from the bench process.
func (b *bench) describeSFN(ctx context.Context, arn string) (string, error) {
	return describeExecution(ctx, b.sc, arn)
}

// describeWorkflow is one DescribeWorkflowExecution RPC through c.
func describeWorkflow(ctx context.Context, c client.Client, r adapters.Ref) (enumspb.WorkflowExecutionStatus, error) {
	id, run := workflowOf(r)
	d, err := c.WorkflowService().DescribeWorkflowExecution(ctx, &workflowservice.DescribeWorkflowExecutionRequest{
		Namespace: namespace(), Execution: &commonpb.WorkflowExecution{WorkflowId: id, RunId: run}})
	return d.GetWorkflowExecutionInfo().GetStatus(), err
}

// describeExecution is one DescribeExecution call through c.
func describeExecution(ctx context.Context, c *sfn.Client, arn string) (string, error) {
	d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		return "", err
	}
	return string(d.Status), nil
}

// startWorkflow is one StartWorkflowExecution RPC of a workflow type on queue.
func (b *bench) startWorkflow(ctx context.Context, queue, workflowType, input string) (adapters.Ref, error) {
	payloads, err := b.dc.ToPayloads(json.RawMessage(input))
	if err != nil {
		return adapters.Ref{}, err
	}
	id := "bench/direct/" + uuid.NewString()
	resp, err := b.tc.WorkflowService().StartWorkflowExecution(ctx, &workflowservice.StartWorkflowExecutionRequest{
		Namespace: namespace(), WorkflowId: id, WorkflowType: &commonpb.WorkflowType{Name: workflowType},
		TaskQueue: &taskqueuepb.TaskQueue{Name: queue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
		Input:     payloads, Identity: "taskgate-bench", RequestId: uuid.NewString(),
	})
	if err != nil {
		return adapters.Ref{}, err
	}
	ref := adapters.Ref{ID: id + "/" + resp.GetRunId()}
	b.remember(ref)
	return ref, nil
}

// startSFN is one StartExecution call.
func (b *bench) startSFN(ctx context.Context, input string) (string, error) {
	out, err := b.sc.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(b.sfnARN),
		Name: aws.String(uuid.NewString()), Input: aws.String(input)})
	if err != nil {
		return "", err
	}
	arn := aws.ToString(out.ExecutionArn)
	b.remember(adapters.Ref{ID: arn})
	return arn, nil
}

// waitEnded polls a task through c until it has ended.
func waitEnded(ctx context.Context, c *mcpclient.Client, id string) error {
	deadline := time.Now().Add(time.Minute)
	for {
		a, err := get(ctx, c, id, "")
		if err != nil {
			return err
		}
		if a.Status != "working" {
			if a.Status != "completed" {
				return fmt.Errorf("task ended %s, want completed", a.Status)
			}
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("task still working after a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
