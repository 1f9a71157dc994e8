// Package stepfunctions serves AWS Step Functions executions as taskgate tasks.
//
// A target's Name is a state machine ARN, optionally qualified by a version number or an alias:
// arn:aws:states:REGION:ACCOUNT:stateMachine:NAME[:VERSION-OR-ALIAS]. A Ref's ID is the execution
// ARN, arn:aws:states:REGION:ACCOUNT:execution:NAME:EXECUTION: executions started through a version
// or alias belong to the state machine itself, so their ARNs carry no qualifier. One Conn serves
// one region; RoleARN reaches state machines in another account.
//
// # Idempotency
//
// Without a key every execution gets a UUID name. With a key its name is "k-" and the first 40 hex
// digits of the key's SHA-256, and Step Functions itself keeps names unique per state machine for
// 90 days after an execution ends: a repeated Start with the same input returns the same
// execution, with other input an error wrapping driver.ErrKeyConflict. Keys are scoped to the
// state machine, not to a version or alias. Step Functions executions carry no tags or memo, so
// StartRequest.Caller is hashed into the name with the key: another caller's same key starts
// another execution instead of reaching the first caller's.
//
// # Statuses
//
// RUNNING and PENDING_REDRIVE are Working, SUCCEEDED is Succeeded, FAILED and TIMED_OUT are Failed,
// ABORTED is Cancelled. A redriven execution keeps its ARN, and DescribeExecution reports the
// status of its latest run: a redriven execution that failed before may be Working or Succeeded
// again. Status.Message then says how often and when it was redriven (RedriveCount, RedriveDate),
// and Status.Updated is the latest of start, redrive and stop. An execution stopped by Cancel
// carries the error "taskgate.Cancelled" and the caller's reason as cause.
//
// # Questions and progress
//
// A question is a .waitForTaskToken task whose resolved parameters hold a "taskgate" block
// ({"message", "schema", "key"}, each optional) with the task token beside it
// ("taskToken.$": "$$.Task.Token"), in the parameters or up to five levels inside them (an SQS
// MessageBody, a Lambda Payload, an EventBridge entry's Detail, also as JSON text). Describe of a
// RUNNING execution reads its newest events (one GetExecutionHistory page of historyWindow events,
// newest first) and reports each such task that has not ended as a Question, State InputRequired;
// the key is the block's, else the state's name, and of several open waits with one key only the
// oldest is asked. The same events give Status.Message: the states that run, a Map's items done,
// a retried task's attempt and last error, and what keeps a block from being asked. Answer finds
// the question there and sends SendTaskSuccess (the answer as the task's output), or
// SendTaskFailure with error "taskgate.Declined" or "taskgate.Dismissed". Without
// states:GetExecutionHistory the status says so and shows no questions.
//
// The history is read only for state machines that can say more in it than DescribeExecution
// does: Check reads the definition (DescribeStateMachine; for an alias, the state machine's
// current one) and finds whether it has a .waitForTaskToken task, a Map or Parallel state, a task
// with Retry, or more than one Task or Wait state. The mapping may say instead, with
// stateMachine: {arn: ..., history: true|false} (Target.Details). A running execution's poll thus
// costs two calls for those state machines (TargetInfo.ReadCalls), one for the others, and one
// once it has ended.
//
// # Express state machines
//
// Express executions cannot be described after they start, so Check reports them SyncOnly and only
// Run (the Conn is a driver.Runner, for them alone) serves them, through StartSyncExecution (without idempotency keys, which Express does not
// honour). The test endpoint (moto) implements neither Express state machines nor
// StartSyncExecution, so that path is written to the AWS documentation and untested here.
//
// # Throttling
//
// Every API call is retried by the SDK up to 8 attempts, with its throttle-aware exponential
// backoff capped at 2 s, except that reads of executions (DescribeExecution, GetExecutionHistory,
// ListExecutions) are not retried when throttled: a retry would spend more of the account's quota,
// and the caller answers from what it read before (adapters/coalesce, adapters/budget). A call
// throttled (ThrottlingException) gives an error wrapping driver.ErrThrottled; an endpoint that
// cannot be reached or answers with a server error, after the retries, driver.ErrUnavailable.
// adapters.Engine.Wait keeps polling through such errors until its context ends.
//
// # Events
//
// An engine whose Config names Events (the block's events: {topicArn, queuePrefix, endpoint}) is
// a driver.EventSource: Notices receives Step Functions' own "Step Functions Execution Status
// Change" events, which an EventBridge rule publishes to the SNS topic, from an SQS queue the
// replica makes for itself (QueuePrefix and 16 random hex digits), lets only the topic send to,
// subscribes with raw message delivery, tags with an expiry it renews every minute, and deletes
// with its subscription at Close. Replicas delete the expired queues of their prefix, and their
// subscriptions, at start and every hour. Each event is told as the execution's ARN and the
// listing's status of its status (listedStatus), started and ended at its startDate and stopDate;
// SNS envelopes are opened, and other messages skipped and deleted. The clients of SNS and SQS use
// the engine's credentials (its role's) and HTTP client. The test endpoint's mends emit the events
// from moto's interpreter and deliver them through moto's EventBridge, SNS and SQS
// (scripts/sfn-local), which is what the tests run against; IAM and the queue's and topic's
// policies are AWS's alone.
//
// # Starts
//
// Start is one StartExecution: DescribeExecution is eventually consistent, so a read right after
// may not find the execution yet, which callers read as not yet visible for the visibility lag
// the driver declares (VisibilityLag, 10 s): adapters.Engine.Wait waits through it, the
// task service reads such a task as starting, and Cancel stops an execution its read does not
// find.
package stepfunctions
