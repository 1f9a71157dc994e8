package stepfunctions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/taskgate/taskgate/adapters/driver"
)

const (
	// stopError is the error StopExecution records, so that the engine's own tools show who
	// stopped an execution; the cause says why.
	stopError = "taskgate.Cancelled"
	// maxPayload is the Step Functions limit on the input and output of an execution, a state or
	// a task (SendTaskSuccess's output), in bytes of UTF-8.
	maxPayload = 256 * 1024
	// maxStopCause is the longest cause StopExecution accepts. AWS counts characters; counting
	// bytes here stays within it.
	maxStopCause = 32768

	// visibleWithin bounds how long a new execution may stay unreadable: DescribeExecution is
	// eventually consistent. Within it, a repeated keyed Start keeps reading an execution that is
	// not found.
	visibleWithin = 5 * time.Second
)

// Owns reports whether r is a Standard execution of t's state machine (same partition, region,
// account and state machine name) named as Start names the caller's. It makes no API call.
func (e *conn) Owns(t driver.Target, r driver.Ref, caller string) bool {
	name, ok := executionOf(t, r)
	return ok && callersName(name, caller)
}

// callersName reports whether name is an execution name Start gives for caller: the caller's tag,
// then "-" and a UUID, or "-k-" and 40 hex digits (keyName). A mere prefix is not enough: anyone
// who may start executions on the engine could name one after a caller's tag.
func callersName(name, caller string) bool {
	rest, ok := strings.CutPrefix(name, driver.CallerTag(caller)+"-")
	return ok && driver.StartedSuffix(rest, "k-", 40)
}

// ownsTarget reports whether r is an execution of t's state machine, whoever started it.
func ownsTarget(t driver.Target, r driver.Ref) bool {
	_, ok := executionOf(t, r)
	return ok
}

// executionOf reads r as an execution of t's state machine (same partition, region, account and
// state machine name), and gives its execution name.
func executionOf(t driver.Target, r driver.Ref) (name string, ok bool) {
	m, err := machineOf(t)
	if err != nil {
		return "", false
	}
	e, name, ok := parseExecutionARN(r.ID)
	return name, ok && e.partition == m.partition && e.region == m.region && e.account == m.account && e.name == m.name
}

// Start starts one execution of a Standard state machine. Without a key the execution name is a
// fresh UUID; with one it is derived from the key, so Step Functions itself refuses a second
// execution under the same key.
func (e *conn) Start(ctx context.Context, t driver.Target, req driver.StartRequest) (driver.Ref, error) {
	m, input, err := e.prepare(t, req)
	if err != nil {
		return driver.Ref{}, err
	}
	typ, err := e.machineType(ctx, m)
	if err != nil {
		return driver.Ref{}, err
	}
	if typ == types.StateMachineTypeExpress {
		return driver.Ref{}, fmt.Errorf("state machine %s is an Express state machine, whose executions cannot be "+
			"described later: serve it through Run (a synchronous tool)", t.Name)
	}
	return e.start(ctx, t, m, input, req)
}

func (e *conn) start(ctx context.Context, t driver.Target, m machineARN, input string, req driver.StartRequest) (driver.Ref, error) {
	name := driver.CallerTag(req.Caller) + "-" + driver.NewSuffix(req.Caller)
	if req.Key != "" {
		name = keyName(req.Key, req.Caller)
	}
	out, err := e.client.StartExecution(ctx, &sfn.StartExecutionInput{
		StateMachineArn: aws.String(m.String()),
		Name:            aws.String(name),
		Input:           aws.String(input),
		TraceHeader:     xrayHeader(req.Trace),
	})
	var exists *types.ExecutionAlreadyExists
	switch {
	case errors.As(err, &exists):
		// With a key, an earlier start under it; without, this call's own first attempt, whose
		// answer was lost and which the SDK retried (a fresh UUID names no one else's): either
		// way the execution of the same input is the one to answer with.
		return e.existing(ctx, m.execution(name), input)
	case err != nil:
		return driver.Ref{}, startError(m.String(), err)
	}
	return driver.Ref{ID: aws.ToString(out.ExecutionArn)}, nil
}

// prepare checks a request against Step Functions' limits before any API call.
func (e *conn) prepare(t driver.Target, req driver.StartRequest) (machineARN, string, error) {
	m, err := e.machine(t)
	if err != nil {
		return machineARN{}, "", err
	}
	if len(req.Input) > maxPayload {
		advice := "pass large data by reference (for example an S3 URI) instead"
		return machineARN{}, "", driver.Refuse(
			fmt.Sprintf("the input is too large: %d bytes, over the engine's limit of %d bytes (256 KiB) of UTF-8: %s", len(req.Input), maxPayload, advice),
			fmt.Errorf("%w: the execution input is %d bytes, over the Step Functions limit of %d bytes (256 KiB) of UTF-8: %s",
				driver.ErrInvalid, len(req.Input), maxPayload, advice))
	}
	if len(req.Input) == 0 {
		return m, "{}", nil
	}
	if !json.Valid(req.Input) {
		return machineARN{}, "", driver.Refuse("the input is not valid JSON", fmt.Errorf("%w: the execution input is not valid JSON", driver.ErrInvalid))
	}
	return m, string(req.Input), nil
}

func startError(machine string, err error) error {
	var badInput *types.InvalidExecutionInput
	var badName *types.InvalidName
	var missing *types.StateMachineDoesNotExist
	var deleting *types.StateMachineDeleting
	switch {
	case errors.As(err, &badInput):
		return driver.Refuse("the engine refused the input: "+badInput.ErrorMessage(), fmt.Errorf("%w: Step Functions refused the execution: %w", driver.ErrInvalid, err))
	case errors.As(err, &badName):
		return fmt.Errorf("%w: Step Functions refused the execution: %w", driver.ErrInvalid, err)
	case errors.As(err, &missing), errors.As(err, &deleting):
		return fmt.Errorf("starting an execution of %s: the state machine is gone or being deleted; "+
			"check the mapping and run taskgate validate: %w", machine, err)
	}
	return apiError("starting an execution of "+machine, err)
}

// existing answers a Start whose key-derived name is taken: the same execution if it was started
// with the same input, whether it still runs or not.
func (e *conn) existing(ctx context.Context, arn, input string) (driver.Ref, error) {
	d, err := e.visible(ctx, arn)
	if err != nil {
		return driver.Ref{}, err
	}
	if !sameJSON(aws.ToString(d.Input), input) {
		return driver.Ref{}, fmt.Errorf("%w: the key was used before with other arguments; send the same "+
			"arguments to get that call's task, or use a new key", driver.ErrKeyConflict)
	}
	return driver.Ref{ID: arn}, nil
}

// sameJSON compares two JSON texts as values: Step Functions may hand back the input reformatted.
func sameJSON(a, b string) bool {
	var va, vb any
	return json.Unmarshal([]byte(a), &va) == nil && json.Unmarshal([]byte(b), &vb) == nil && reflect.DeepEqual(va, vb)
}

// visible describes an execution that another Start began, retrying while DescribeExecution
// (which is eventually consistent) does not find it yet.
func (e *conn) visible(ctx context.Context, arn string) (*sfn.DescribeExecutionOutput, error) {
	deadline := time.Now().Add(visibleWithin)
	delay := 50 * time.Millisecond
	for {
		d, err := e.reader.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		var missing *types.ExecutionDoesNotExist
		switch {
		case err == nil:
			return d, nil
		case !errors.As(err, &missing):
			return nil, apiError("reading execution "+arn+" after starting it", err)
		case time.Now().Add(delay).After(deadline):
			return nil, fmt.Errorf("%w: execution %s was started, but Step Functions still does not show it after %v; "+
				"it may appear later", driver.ErrUnavailable, arn, visibleWithin)
		}
		if err := driver.Sleep(ctx, delay); err != nil {
			return nil, fmt.Errorf("waiting for execution %s to become visible: %w", arn, err)
		}
		delay = min(delay*2, time.Second)
	}
}

// Describe reads the execution's status with one DescribeExecution and, for a state machine that
// can ask or has progress to report (readsHistory), a running execution's questions and progress
// from its newest events with one GetExecutionHistory: two calls while it runs, one otherwise.
func (e *conn) Describe(ctx context.Context, t driver.Target, r driver.Ref) (driver.Status, error) {
	d, err := e.describe(ctx, t, r)
	if err != nil {
		return driver.Status{}, err
	}
	if d.Status != types.ExecutionStatusRunning || !e.readsHistory(t) {
		return statusOf(d), nil
	}
	return e.withHistory(ctx, r, statusOf(d))
}

func (e *conn) describe(ctx context.Context, t driver.Target, r driver.Ref) (*sfn.DescribeExecutionOutput, error) {
	if !ownsTarget(t, r) {
		return nil, notOwned(t, r)
	}
	d, err := e.reader.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(r.ID)})
	if missing := missingExecution(r.ID, err); missing != nil {
		return nil, missing
	}
	if err != nil {
		return nil, apiError("reading execution "+r.ID, err)
	}
	return d, nil
}

// notOwned is the error of a Ref that is no execution of t's state machine.
func notOwned(t driver.Target, r driver.Ref) error {
	return fmt.Errorf("%w: %s is not an execution of state machine %s", driver.ErrNotFound, r, t.Name)
}

// missingExecution is the contract's ErrNotFound when err says that Step Functions has no
// execution arn, else nil.
func missingExecution(arn string, err error) error {
	var missing *types.ExecutionDoesNotExist
	if !errors.As(err, &missing) {
		return nil
	}
	return fmt.Errorf("%w: Step Functions has no execution %s (executions are kept 90 days after they end)", driver.ErrNotFound, arn)
}

// Outcome reads how the execution ended.
func (e *conn) Outcome(ctx context.Context, t driver.Target, r driver.Ref) (driver.Outcome, error) {
	d, err := e.describe(ctx, t, r)
	if err != nil {
		return driver.Outcome{}, err
	}
	o, ended := outcomeOf(d)
	if !ended {
		return driver.Outcome{}, fmt.Errorf("%w: execution %s is %s", driver.ErrNotEnded, r.ID, d.Status)
	}
	return e.withStopDetails(ctx, r.ID, o), nil
}

// withStopDetails fills in the error and cause of an aborted execution from its last history event
// when DescribeExecution leaves them out (as some Step Functions implementations do). Failing to
// read the history leaves them empty rather than failing the outcome: it needs another IAM
// permission (states:GetExecutionHistory) that a deployment may not grant.
func (e *conn) withStopDetails(ctx context.Context, arn string, o driver.Outcome) driver.Outcome {
	if o.State != driver.Cancelled || o.Error != "" || o.Cause != "" {
		return o
	}
	h, err := e.reader.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{
		ExecutionArn: aws.String(arn),
		ReverseOrder: true,
		MaxResults:   1,
	})
	if err != nil {
		return o
	}
	var last int64
	for _, ev := range h.Events {
		if ev.Type == types.HistoryEventTypeExecutionAborted && ev.ExecutionAbortedEventDetails != nil && ev.Id > last {
			last = ev.Id
			o.Error = aws.ToString(ev.ExecutionAbortedEventDetails.Error)
			o.Cause = aws.ToString(ev.ExecutionAbortedEventDetails.Cause)
		}
	}
	return o
}

// Run runs an execution of an Express state machine (TargetInfo.SyncOnly) through
// StartSyncExecution, which answers when the execution ends. Step Functions does not deduplicate
// Express executions, so it refuses an idempotency key; a Standard state machine is refused too:
// its executions start and are read.
func (e *conn) Run(ctx context.Context, t driver.Target, req driver.StartRequest) (driver.Ref, driver.Outcome, error) {
	m, input, err := e.prepare(t, req)
	if err != nil {
		return driver.Ref{}, driver.Outcome{}, err
	}
	typ, err := e.machineType(ctx, m)
	switch {
	case err != nil:
		return driver.Ref{}, driver.Outcome{}, err
	case typ != types.StateMachineTypeExpress:
		return driver.Ref{}, driver.Outcome{}, fmt.Errorf("%w: %s is a %s state machine: start its executions, Run is for Express ones", driver.ErrInvalid, t.Name, typ)
	case req.Key != "":
		return driver.Ref{}, driver.Outcome{}, driver.Refuse("this tool takes no idempotency key: call it without one",
			fmt.Errorf("%w: %s is an Express state machine, and Step Functions does not deduplicate Express executions: "+
				"call it without an idempotency key", driver.ErrInvalid, t.Name))
	}
	return e.runSync(ctx, m, input, req.Trace)
}

func (e *conn) runSync(ctx context.Context, m machineARN, input string, trace map[string]string) (driver.Ref, driver.Outcome, error) {
	out, err := e.client.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{
		StateMachineArn: aws.String(m.String()),
		Input:           aws.String(input),
		TraceHeader:     xrayHeader(trace),
	}, e.syncEndpoint)
	if err != nil {
		return driver.Ref{}, driver.Outcome{}, startError(m.String(), err)
	}
	return driver.Ref{ID: aws.ToString(out.ExecutionArn)}, syncOutcomeOf(out), nil
}

// syncEndpoint keeps a configured endpoint as it is: the SDK sends StartSyncExecution to
// "sync-" + host, which exists on AWS's own endpoints but not on a VPC endpoint or an emulator.
func (e *conn) syncEndpoint(o *sfn.Options) {
	if e.endpoint == "" {
		return
	}
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("taskgateNoHostPrefix",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (
				middleware.InitializeOutput, middleware.Metadata, error,
			) {
				return next.HandleInitialize(smithyhttp.DisableEndpointHostPrefix(ctx, true), in)
			}), middleware.Before)
	})
}

// Cancel stops a running execution with error "taskgate.Cancelled" and the reason as cause.
// StopExecution succeeds on an execution that has already ended and leaves it as it was, so the
// execution is read first to answer ErrEnded. An execution that ends between the two calls keeps
// its own ending and Cancel returns nil. One that the read does not find (just started, not yet
// visible) is stopped all the same: StopExecution says whether it exists.
func (e *conn) Cancel(ctx context.Context, t driver.Target, r driver.Ref, reason string) error {
	d, err := e.describe(ctx, t, r)
	switch {
	case errors.Is(err, driver.ErrNotFound) && ownsTarget(t, r):
		// Not visible yet, or gone: StopExecution tells which.
	case err != nil:
		return err
	case stateOf(d.Status).Terminal():
		return fmt.Errorf("%w: execution %s ended %s", driver.ErrEnded, r.ID, d.Status)
	}
	_, err = e.client.StopExecution(ctx, &sfn.StopExecutionInput{
		ExecutionArn: aws.String(r.ID),
		Error:        aws.String(stopError),
		Cause:        aws.String(truncate(reason, maxStopCause)),
	})
	var missing *types.ExecutionDoesNotExist
	if errors.As(err, &missing) {
		return fmt.Errorf("%w: Step Functions has no execution %s", driver.ErrNotFound, r.ID)
	}
	if err != nil {
		return apiError("stopping execution "+r.ID, err)
	}
	return nil
}

// truncate cuts s to at most n bytes without splitting a character.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
