// Package temporal serves Temporal workflows as taskgate executions: a driver.Conn on
// go.temporal.io/sdk.
//
// A Ref is the workflow id and the run id of the chain's first run (driver.go); every call asks the
// Temporal frontend. Workflow ids are "taskgate/<workflow type>/<caller tag>/<uuid>" for a fresh start and
// "taskgate/<workflow type>/<caller tag>/k-<32 hex>" (from the SHA-256 of the idempotency key) for
// a keyed one, which lets Owns tell a target's and a caller's executions from any other without a
// call. The SHA-256 of the input is kept in the workflow's memo, so that a repeated key can be
// checked against it; the caller is kept there too, for the engine's own tools (visibility
// queries, the UI).
package temporal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/internal/lru"
)

// Memo keys that Start records on every workflow it starts.
const (
	// MemoInputSHA256 is the hex SHA-256 of the compacted JSON input.
	MemoInputSHA256 = "taskgate.input_sha256"
	// MemoCaller is StartRequest.Caller, when not empty.
	MemoCaller = "taskgate.caller"
)

const (
	idPrefix    = "taskgate/"
	keyIDPrefix = "k-"
	identity    = "taskgate"
	// traceHeader is the workflow header field where Temporal's OpenTelemetry interceptor
	// (go.temporal.io/sdk/contrib/opentelemetry, its default HeaderKey) reads the trace context
	// of a start: the W3C fields as a map[string]string, encoded by the default data converter.
	// Start writes it itself: the interceptor writes it only through client.ExecuteWorkflow, which
	// made a start 11 to 33% slower, with 54% more bytes and 56% more allocations.
	traceHeader = "_tracer-data"
)

// Config is how to reach one Temporal namespace.
type Config struct {
	// Address is the frontend's host:port, e.g. "127.0.0.1:7233".
	Address string
	// Namespace defaults to "default".
	Namespace string
}

// conn is a connection to one Temporal namespace. It is safe for concurrent use.
type conn struct {
	client    client.Client
	svc       workflowservice.WorkflowServiceClient
	namespace string
	address   string
	dc        converter.DataConverter
	// namespaceSeen: the namespace answered once (Check, a start or a read found it), so a later
	// "namespace not found" is the frontend's namespace cache refreshing (a Temporal dev server on
	// SQLite said so under the soak, test/soak, minutes after serving the namespace), not a
	// setting to fix.
	namespaceSeen atomic.Bool
	// closes are the runs that listings lately showed closed (remember).
	closes *lru.Cache[string, closedRun]
	// waiting holds the message of a run no worker picked up yet, by task queue (waitingFor).
	waiting sync.Map
}

var (
	_ driver.Conn             = (*conn)(nil)
	_ driver.VisibilityLagger = (*conn)(nil)
	_ driver.Aser             = (*conn)(nil)
)

// VisibilityLag is zero: DescribeWorkflowExecution reads the workflow's mutable state, which
// StartWorkflowExecution wrote before it answered, so a start is found at once. (Only the
// visibility listings, which Sweep reads, lag; the readings confirm what they show.)
func (e *conn) VisibilityLag() time.Duration { return 0 }

// New dials the frontend at cfg.Address and checks that it answers.
func New(ctx context.Context, cfg Config) (driver.Conn, error) {
	if cfg.Address == "" {
		return nil, errors.New("temporal: no address: set the Temporal frontend's host:port")
	}
	e, err := dial(ctx, client.Options{HostPort: cfg.Address, Namespace: cfg.Namespace}, true)
	if err != nil { // not a typed nil inside the interface
		return nil, err
	}
	return e, nil
}

// reconnect is how the connection to the frontend is dialled again once it broke. The SDK's
// backoff between attempts grows to 10 s, and until an attempt succeeds every call fails at once
// with the last attempt's error: a replica went on answering "engine unavailable" for up to 10 s
// after a restarted server was back (the soak, test/soak, measured 5 s after a 10 s outage).
// Attempts at most a second apart answer within about a second of the server's return, for the
// cost of one connection attempt per second while it is down. Each attempt keeps the SDK's 20 s.
var reconnect = grpc.ConnectParams{
	Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
	MinConnectTimeout: 20 * time.Second,
}

// Keepalive: how soon a connection that went silent is found dead and dialled again, when a NAT
// or firewall forgets it and drops its packets without a word: a ping after 15 s without a byte
// from the frontend, given 5 s to answer. With the SDK's 30 s and 15 s, every call to the frontend
// hung for 45 s after the soak (test/soak) silenced the connection. The frontend takes pings every
// 10 s (frontend.keepAliveMinTime).
const (
	keepAliveTime    = 15 * time.Second
	keepAliveTimeout = 5 * time.Second
)

// dial makes a client with the SDK's client options (address, namespace, TLS, credentials,
// headers); checked, it also checks that the frontend answers, else it makes no call and connects
// on the first one (gRPC then reconnects, at most a second apart, for as long as the frontend is
// away).
//
// Requests go uncompressed (the SDK gzips every request by default, and the frontend then gzips
// its answer): taskgate's requests and the statuses it reads are a few hundred bytes, and a poll
// spent about a tenth of taskgate's CPU compressing and decompressing them (test/bench/RESULTS.md).
// Only a start's arguments and an outcome's result can be large, once per task.
func dial(ctx context.Context, opts client.Options, checked bool) (*conn, error) {
	if opts.HostPort == "" {
		opts.HostPort = client.DefaultHostPort
	}
	if opts.ConnectionOptions.GrpcCompression == nil {
		opts.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
	}
	if opts.ConnectionOptions.KeepAliveTime == 0 {
		opts.ConnectionOptions.KeepAliveTime = keepAliveTime
	}
	if opts.ConnectionOptions.KeepAliveTimeout == 0 {
		opts.ConnectionOptions.KeepAliveTimeout = keepAliveTimeout
	}
	// Before the caller's own dial options, which may set their own; after the SDK's.
	opts.ConnectionOptions.DialOptions = append([]grpc.DialOption{grpc.WithConnectParams(reconnect)}, opts.ConnectionOptions.DialOptions...)
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	opts.Logger = log.NewStructuredLogger(slog.Default())
	if !checked {
		c, err := client.NewLazyClient(opts)
		if err != nil {
			return nil, fmt.Errorf("temporal: %w", err)
		}
		return newConn(c, opts), nil
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("temporal: connecting to %s: %w", opts.HostPort, ctx.Err())
		}
		return nil, fmt.Errorf("temporal: cannot reach the Temporal frontend at %s: %w; check the address, TLS and API key, and that the server is running", opts.HostPort, err)
	}
	return newConn(c, opts), nil
}

func newConn(c client.Client, opts client.Options) *conn {
	return &conn{
		client:    c,
		svc:       c.WorkflowService(),
		namespace: opts.Namespace,
		address:   opts.HostPort,
		dc:        converter.GetDefaultDataConverter(),
		closes:    newCloses(),
	}
}

// As answers the SDK's client (*client.Client, go.temporal.io/sdk/client), for running workers
// on the same connection or reading what the contract does not.
func (e *conn) As(target any) bool {
	c, ok := target.(*client.Client)
	if ok {
		*c = e.client
	}
	return ok
}

// Close closes the connection.
func (e *conn) Close() error {
	e.client.Close()
	return nil
}

// Check verifies that the namespace exists and that t names a workflow type and a task queue. No
// worker polling the task queue is a warning, not an error: workers may start after taskgate.
func (e *conn) Check(ctx context.Context, t driver.Target) (driver.TargetInfo, error) {
	w, err := workflowOf(t)
	if err != nil {
		return driver.TargetInfo{}, err
	}
	ns, err := e.svc.DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: e.namespace})
	if err != nil {
		return driver.TargetInfo{}, e.fail(ctx, "checking namespace "+e.namespace, err)
	}
	e.namespaceSeen.Store(true)
	resp, err := e.svc.DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
		Namespace:     e.namespace,
		TaskQueue:     &taskqueuepb.TaskQueue{Name: w.queue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
		TaskQueueType: enumspb.TASK_QUEUE_TYPE_WORKFLOW,
	})
	if err != nil {
		return driver.TargetInfo{}, e.fail(ctx, "checking task queue "+w.queue, err)
	}
	// An outcome is read with the chain's status, then the close event of its last run.
	info := driver.TargetInfo{Retention: ns.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration(), OutcomeCalls: outcomeCalls}
	if len(resp.GetPollers()) == 0 {
		info.Warnings = append(info.Warnings, fmt.Sprintf(
			"no worker polls task queue %q in namespace %q: executions of %s stay submitted until a worker that registers it polls that queue",
			w.queue, e.namespace, w.typ))
	}
	return info, nil
}

// workflowOf reads a target's Spec, which must be a workflow with a type and a task queue.
func workflowOf(t driver.Target) (workflow, error) {
	w, ok := t.Spec.(workflow)
	switch {
	case !ok:
		return workflow{}, fmt.Errorf("temporal: %w: target %q is not a Temporal workflow: map it as workflow: {type: ..., taskQueue: ...}", driver.ErrInvalid, t.Name)
	case w.typ == "":
		return workflow{}, fmt.Errorf("temporal: %w: the target has no workflow type: set its name", driver.ErrInvalid)
	case w.queue == "":
		return workflow{}, fmt.Errorf("temporal: %w: target %s has no task queue: set the queue its workers poll", driver.ErrInvalid, w.typ)
	}
	return w, nil
}

// Start starts one workflow execution. With a Key, the workflow id comes from the key, and a
// second Start with the same key (and caller, which the workflow id holds) returns the first
// execution (running or ended) if the input matches, else an error wrapping
// driver.ErrKeyConflict.
func (e *conn) Start(ctx context.Context, t driver.Target, req driver.StartRequest) (driver.Ref, error) {
	w, err := workflowOf(t)
	if err != nil {
		return driver.Ref{}, err
	}
	input, sum, err := canonicalInput(req.Input)
	if err != nil {
		return driver.Ref{}, err
	}
	payloads, err := e.dc.ToPayloads(input)
	if err != nil {
		return driver.Ref{}, fmt.Errorf("temporal: start %s: encoding the input: %w", w.typ, err)
	}
	memo, err := e.memo(sum, req.Caller)
	if err != nil {
		return driver.Ref{}, fmt.Errorf("temporal: start %s: encoding the memo: %w", w.typ, err)
	}
	sreq := &workflowservice.StartWorkflowExecutionRequest{
		Namespace:    e.namespace,
		WorkflowId:   idPrefix + w.typ + "/" + driver.CallerTag(req.Caller) + "/" + driver.NewSuffix(req.Caller),
		WorkflowType: &commonpb.WorkflowType{Name: w.typ},
		TaskQueue:    &taskqueuepb.TaskQueue{Name: w.queue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
		Input:        payloads,
		Identity:     identity,
		RequestId:    uuid.NewString(),
		Memo:         &commonpb.Memo{Fields: memo},
	}
	if w.timeout > 0 {
		sreq.WorkflowExecutionTimeout = durationpb.New(w.timeout)
	}
	if len(req.Trace) > 0 {
		p, err := e.dc.ToPayload(req.Trace)
		if err != nil {
			return driver.Ref{}, fmt.Errorf("temporal: start %s: encoding the trace context: %w", w.typ, err)
		}
		sreq.Header = &commonpb.Header{Fields: map[string]*commonpb.Payload{traceHeader: p}}
	}
	if req.Key != "" {
		sreq.WorkflowId = keyWorkflowID(w, req.Key, req.Caller)
		// A running execution with this id is returned as is; an ended one is reported as already
		// started: either way no second execution starts, and existing() checks the input.
		sreq.WorkflowIdConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING
		sreq.WorkflowIdReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	}
	resp, err := e.svc.StartWorkflowExecution(ctx, sreq)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	switch {
	case err == nil && resp.GetStarted():
		e.namespaceSeen.Store(true)
		return ref(sreq.WorkflowId, resp.GetRunId()), nil
	case err == nil && req.Key != "":
		return e.existing(ctx, w, sreq.WorkflowId, resp.GetRunId(), sum)
	case errors.As(err, &started) && req.Key != "":
		return e.existing(ctx, w, sreq.WorkflowId, started.RunId, sum)
	case err == nil:
		return driver.Ref{}, fmt.Errorf("temporal: start %s: the server did not start workflow %s and gave no reason", w.typ, sreq.WorkflowId)
	default:
		return driver.Ref{}, e.fail(ctx, "start "+w.typ, err)
	}
}

// existing checks that the execution an idempotency key already names was started with the same
// input, and returns its Ref. runID is any run of its chain.
func (e *conn) existing(ctx context.Context, w workflow, id, runID, sum string) (driver.Ref, error) {
	what := "start " + w.typ
	d, err := e.describe(ctx, what, id, runID)
	if err != nil {
		return driver.Ref{}, err
	}
	first := d.GetWorkflowExecutionInfo().GetFirstRunId()
	if first == "" {
		first = runID
	}
	// The memo is read from the first run: the one Start wrote it on.
	if first != runID {
		if d, err = e.describe(ctx, what, id, first); err != nil {
			return driver.Ref{}, err
		}
	}
	// The workflow id already depends on the caller (driver.ScopedKey): only the input can differ.
	fields := d.GetWorkflowExecutionInfo().GetMemo().GetFields()
	if e.memoString(fields[MemoInputSHA256]) != sum {
		return driver.Ref{}, fmt.Errorf("temporal: %s: %w: workflow %s was started under this key with other arguments; repeat those arguments, or use a new key", what, driver.ErrKeyConflict, id)
	}
	return ref(id, first), nil
}

// canonicalInput validates and compacts the input (empty means JSON null) and returns it with its
// hex SHA-256.
func canonicalInput(in json.RawMessage) (json.RawMessage, string, error) {
	if len(in) == 0 {
		in = json.RawMessage("null")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, in); err != nil {
		return nil, "", driver.Refuse("the input is not valid JSON", fmt.Errorf("temporal: %w: the input is not valid JSON: %w", driver.ErrInvalid, err))
	}
	sum := sha256.Sum256(b.Bytes())
	return b.Bytes(), hex.EncodeToString(sum[:]), nil
}

func keyWorkflowID(w workflow, key, caller string) string {
	return idPrefix + w.typ + "/" + driver.CallerTag(caller) + "/" + driver.KeySuffix(key, caller, keyIDPrefix, 32)
}

func (e *conn) memo(sum, caller string) (map[string]*commonpb.Payload, error) {
	fields := map[string]*commonpb.Payload{}
	values := map[string]string{MemoInputSHA256: sum}
	if caller != "" {
		values[MemoCaller] = caller
	}
	for k, v := range values {
		p, err := e.dc.ToPayload(v)
		if err != nil {
			return nil, err
		}
		fields[k] = p
	}
	return fields, nil
}

// memoString decodes a string memo field; missing or undecodable reads as empty.
func (e *conn) memoString(p *commonpb.Payload) string {
	var s string
	if p == nil || e.dc.FromPayload(p, &s) != nil {
		return ""
	}
	return s
}

// Owns reports whether r is shaped like an execution Start returns for t and caller: a workflow
// id of t's workflow type and the caller's tag with a UUID or key suffix, and a UUID run id.
func (e *conn) Owns(t driver.Target, r driver.Ref, caller string) bool {
	w, err := workflowOf(t)
	id, run, ok := WorkflowOf(r)
	return err == nil && ok && run != "" && callersWorkflowID(w, id, caller)
}

// callersWorkflowID reports whether id is a workflow id Start gives for w and caller: the caller's
// tag, then a UUID or a key's hash. A mere prefix is not enough: anyone who may start workflows on
// the namespace could name one after a caller's tag.
func callersWorkflowID(w workflow, id, caller string) bool {
	rest, ok := strings.CutPrefix(id, idPrefix+w.typ+"/"+driver.CallerTag(caller)+"/")
	return ok && driver.StartedSuffix(rest, keyIDPrefix, 32)
}
