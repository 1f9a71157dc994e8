package stepfunctions

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/taskgate/taskgate/adapters/driver"
)

// Events is where an engine block hears of its executions' ends as they happen: Step Functions
// puts a "Step Functions Execution Status Change" event on the default EventBridge bus of its
// account and region for each status change of a Standard execution; a rule there (set up with the
// deployment: terraform/modules/taskgate-stepfunctions-events) publishes them to an SNS topic; and
// each replica receives them from an SQS queue of its own, which it creates, subscribes to the
// topic and deletes again (Notices, Close). taskgate keeps no state: the queue is
// the replica's mailbox for as long as it runs, and the engine stays the record.
type Events struct {
	// TopicARN is the SNS topic the rule publishes the events to, in the engine's region. Empty:
	// the block names no event source, and Notices answers driver.ErrUnsupported.
	TopicARN string
	// QueuePrefix starts the name of each replica's queue (a random suffix follows); it also names
	// the queues of replicas that ended without deleting theirs, which replicas delete once
	// expired. Empty: DefaultQueuePrefix.
	QueuePrefix string
	// Endpoint replaces the SNS and SQS endpoint URL (moto, LocalStack). Empty: the Config's
	// Endpoint when it has one, else AWS's own.
	Endpoint string
}

// DefaultQueuePrefix is the prefix of the queues of an Events that names none.
const DefaultQueuePrefix = "taskgate-"

// Queue names are QueuePrefix and queueSuffix random lowercase hex digits: SQS allows 80
// characters of letters, digits, - and _.
const (
	queueSuffix    = 16
	maxQueuePrefix = 80 - queueSuffix
)

// Events' queues: how long a queue lives unrenewed, how often its replica renews it, how often a
// replica looks for expired queues of its prefix (besides at start), and how long SQS keeps a
// message nobody received (a notice only matters for seconds: a replica that stopped receiving
// for longer learns the same from its sweeps).
const (
	queueLifetime    = 10 * time.Minute
	queueRenewal     = time.Minute
	queueSweep       = time.Hour
	messageRetention = 5 * time.Minute
	// expiresTag is the tag that holds a queue's expiry (RFC 3339, UTC), subscriptionTag the ARN of
	// its subscription to the topic, for whoever deletes it once expired.
	expiresTag      = "taskgate:expires"
	subscriptionTag = "taskgate:subscription"
	maxTagValue     = 256
)

// Receives and retries: a receive waits up to receiveWait for a message (SQS long polling);
// failures are retried after retryMin, doubling up to retryMax.
const (
	receiveWait     = 1
	receiveMessages = 10
	retryMin        = 250 * time.Millisecond
	retryMax        = 15 * time.Second
	// cleanupTimeout bounds what Close spends on deleting the queue.
	cleanupTimeout = 10 * time.Second
)

const (
	statusChange = "Step Functions Execution Status Change"
	statesSource = "aws.states"
)

var (
	topicARNRE    = regexp.MustCompile(`^arn:(aws[a-z-]*):sns:([a-z]{2}(-[a-z]+)+-[0-9]+):([0-9]{12}):([A-Za-z0-9_-]{1,256}(\.fifo)?)$`)
	queuePrefixRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
)

// topicARN is a parsed SNS topic ARN.
type topicARN struct{ partition, region, account, name string }

func parseTopicARN(s string) (topicARN, bool) {
	m := topicARNRE.FindStringSubmatch(s)
	if m == nil {
		return topicARN{}, false
	}
	return topicARN{partition: m[1], region: m[2], account: m[4], name: m[5]}, true
}

// validQueuePrefix reports whether p, with the random suffix, makes an SQS queue name.
func validQueuePrefix(p string) bool {
	return len(p) <= maxQueuePrefix && queuePrefixRE.MatchString(p)
}

// queueARNPattern is the ARN pattern of the queues of prefix that credentials of account make for
// the topic (in its region): what the IAM policy grants.
func queueARNPattern(t topicARN, account, prefix string) string {
	return fmt.Sprintf("arn:%s:sqs:%s:%s:%s*", t.partition, t.region, account, prefix)
}

// statusEvents is an engine's event source: the SNS and SQS clients, and the replica's queue once
// Notices made it.
type statusEvents struct {
	topic  string
	where  topicARN
	prefix string
	sns    *sns.Client
	sqs    *sqs.Client
	log    *slog.Logger

	mu        sync.Mutex
	receiving bool // a Notices runs
	closed    bool
	q         queue // the zero queue until made
}

// queue is a replica's queue and its subscription to the topic.
type queue struct {
	name, url, arn, subscription string
}

func newEvents(awsCfg aws.Config, cfg Config, log *slog.Logger) (*statusEvents, error) {
	ev := cfg.Events
	t, ok := parseTopicARN(ev.TopicARN)
	if !ok {
		return nil, fmt.Errorf("events: %q is not an SNS topic ARN: want arn:PARTITION:sns:REGION:ACCOUNT:NAME", ev.TopicARN)
	}
	if t.region != awsCfg.Region {
		return nil, fmt.Errorf("events: the topic %s is in region %s, but this Step Functions engine uses region %s: "+
			"Step Functions sends its events to the EventBridge of its own region, whose rules publish to topics of that region: "+
			"name a topic of %s", ev.TopicARN, t.region, awsCfg.Region, awsCfg.Region)
	}
	prefix := ev.QueuePrefix
	if prefix == "" {
		prefix = DefaultQueuePrefix
	}
	if !validQueuePrefix(prefix) {
		return nil, fmt.Errorf("events: queuePrefix %q: want at most %d letters, digits, - and _", prefix, maxQueuePrefix)
	}
	endpoint := ev.Endpoint
	if endpoint == "" {
		endpoint = cfg.Endpoint
	}
	// The receive loop retries on its own: the clients retry little, and a retry of theirs is not
	// one of Step Functions' (Config.Retried).
	retryer := func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) { o.MaxAttempts = 3; o.MaxBackoff = maxBackoff })
	}
	return &statusEvents{
		topic: ev.TopicARN, where: t, prefix: prefix, log: log,
		sns: sns.NewFromConfig(awsCfg, func(o *sns.Options) {
			o.Retryer = retryer()
			if endpoint != "" {
				o.BaseEndpoint = aws.String(endpoint)
			}
		}),
		sqs: sqs.NewFromConfig(awsCfg, func(o *sqs.Options) {
			o.Retryer = retryer()
			if endpoint != "" {
				o.BaseEndpoint = aws.String(endpoint)
			}
		}),
	}, nil
}

var _ driver.EventSource = (*conn)(nil)

// Notices receives the block's status change events (its Events) until ctx ends. The first call
// creates the replica's queue (QueuePrefix and a random suffix), lets only the topic send to it,
// subscribes it to the topic with raw message delivery, and deletes the expired queues of the
// prefix that replicas left behind; later calls receive from the same queue, and Close deletes it
// and its subscription. Each receive (a long poll of up to a second, ten messages) is told to
// heard, with the executions its events name and the status they say, also when it received
// nothing, and with when it began; but a receive that came back full may have left more behind,
// so until one comes back short, heard is given when the last one that came back short began
// (and a backlog is drained with up to four receives at once). The messages are then deleted
// (beside the next receives), and those that are no status change event of Step Functions
// skipped. While it receives, it renews the queue's expiry every minute and looks for expired
// queues every hour. A queue that disappeared (another replica took it for expired) is made
// again. Failures that retrying may mend are logged and retried, with a backoff of up to 15 s; it
// returns an error when the topic does not exist or the credentials may not do what it needs. One
// Notices at a time: another call while one runs is an error. Without Events: an error wrapping
// driver.ErrUnsupported.
func (e *conn) Notices(ctx context.Context, heard func(at time.Time, changed []driver.Listed)) error {
	ev := e.events
	if ev == nil {
		return fmt.Errorf("%w: notices: this Step Functions engine block names no event source: add events: {topicArn: ARN} "+
			"with the SNS topic its EventBridge rule publishes status changes to", driver.ErrUnsupported)
	}
	ev.mu.Lock()
	if ev.receiving || ev.closed {
		closed := ev.closed
		ev.mu.Unlock()
		if closed {
			return errors.New("stepfunctions: notices: the engine is closed")
		}
		return errors.New("stepfunctions: notices: another Notices of this engine is receiving: one at a time")
	}
	ev.receiving = true
	ev.mu.Unlock()
	defer func() {
		ev.mu.Lock()
		ev.receiving = false
		ev.mu.Unlock()
	}()
	return ev.receive(ctx, heard)
}

func (ev *statusEvents) receive(ctx context.Context, heard func(at time.Time, changed []driver.Listed)) error {
	var upkeep sync.WaitGroup
	defer upkeep.Wait()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	backoff := retryMin
	failed := func(what string, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if ev.isClosed() {
			return errors.New("stepfunctions: notices: the engine is closed")
		}
		if why := permanent(err); why != "" {
			ev.log.Error("stepfunctions: cannot receive status change events", "topic", ev.topic, "err", err)
			return fmt.Errorf("stepfunctions: %s: %w: %s", what, err, why)
		}
		ev.log.Warn("stepfunctions: status change events: retrying", "what", what, "topic", ev.topic, "after", backoff, "err", err)
		if err := driver.Sleep(ctx, jitter(backoff)); err != nil {
			return err
		}
		backoff = min(2*backoff, retryMax)
		return nil
	}
	// The queue of an earlier Notices serves again; if it was taken for expired meanwhile, the
	// first receive finds it gone and makes another.
	ev.mu.Lock()
	q := ev.q
	ev.mu.Unlock()
	for q.url == "" {
		var err error
		if q, err = ev.open(ctx); err != nil {
			if err := failed("making the queue for status change events", err); err != nil {
				return err
			}
		}
	}
	upkeep.Go(func() { ev.upkeep(ctx) })
	// Deletes go on beside the receives, so that a backlog drains at a receive per round trip.
	deletes := make(chan deletion, 4*maxReceivers)
	upkeep.Go(func() {
		for d := range deletes {
			ev.delete(ctx, d.q, d.messages)
		}
	})
	defer close(deletes)
	// told is when the last round of receives began of which one came back short of a full batch:
	// every message sent before it has been received. A round of full batches may leave more
	// behind, so it tells of the changes as of then, not as of its own start; and the next round
	// receives on more connections at once (up to maxReceivers), to drain the backlog.
	var told time.Time
	receivers := 1
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if ev.isClosed() {
			return errors.New("stepfunctions: notices: the engine is closed")
		}
		at := time.Now()
		batches, err := ev.receiveRound(ctx, q, receivers)
		var gone *sqstypes.QueueDoesNotExist
		if errors.As(err, &gone) && ctx.Err() == nil && !ev.isClosed() {
			// Another replica took it for expired (this one was paused past its expiry): make another.
			ev.log.Warn("stepfunctions: the queue of status change events is gone; making another", "queue", q.name)
			ev.forget(q)
			q = queue{}
			for q.url == "" {
				if q, err = ev.open(ctx); err != nil {
					if err := failed("making the queue for status change events", err); err != nil {
						return err
					}
				}
			}
			continue
		}
		if err != nil {
			if err := failed("receiving status change events from "+q.name, err); err != nil {
				return err
			}
			continue
		}
		backoff = retryMin
		var messages []sqstypes.Message
		full := true
		for _, b := range batches {
			messages = append(messages, b...)
			full = full && len(b) == receiveMessages
		}
		if !full || told.IsZero() {
			told = at
		}
		heard(told, ev.notices(messages))
		for _, b := range batches {
			if len(b) == 0 {
				continue
			}
			select {
			case deletes <- deletion{q, b}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		receivers = 1
		if full {
			receivers = min(2*len(batches), maxReceivers)
		}
	}
}

// maxReceivers is how many receives a backlog is drained with at once.
const maxReceivers = 4

// receiveRound makes n receives at once, and returns what they received: an error when none
// received anything and one failed.
func (ev *statusEvents) receiveRound(ctx context.Context, q queue, n int) ([][]sqstypes.Message, error) {
	receive := func() ([]sqstypes.Message, error) {
		out, err := ev.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(q.url), WaitTimeSeconds: receiveWait, MaxNumberOfMessages: receiveMessages,
		})
		if err != nil {
			return nil, err
		}
		return out.Messages, nil
	}
	if n <= 1 {
		b, err := receive()
		return [][]sqstypes.Message{b}, err
	}
	batches := make([][]sqstypes.Message, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { batches[i], errs[i] = receive() })
	}
	wg.Wait()
	var ok [][]sqstypes.Message
	for i, b := range batches {
		if errs[i] == nil {
			ok = append(ok, b)
		}
	}
	if len(ok) == 0 {
		return nil, errors.Join(errs...)
	}
	return ok, nil
}

// deletion is the messages of one receive, to delete.
type deletion struct {
	q        queue
	messages []sqstypes.Message
}

// notices reads the executions that messages tell of, the latest word on each: an end over a
// running status, else the later change.
func (ev *statusEvents) notices(messages []sqstypes.Message) []driver.Listed {
	var listed []driver.Listed
	at := map[string]int{}
	for _, m := range messages {
		l, err := noticeOf(aws.ToString(m.Body))
		if err != nil {
			if !errors.Is(err, errOtherEvent) {
				ev.log.Warn("stepfunctions: skipped a message that is no status change event", "message", aws.ToString(m.MessageId), "err", err)
			}
			continue
		}
		i, seen := at[l.Ref.ID]
		switch {
		case !seen:
			at[l.Ref.ID] = len(listed)
			listed = append(listed, l)
		case later(l.Status, listed[i].Status):
			listed[i] = l
		}
	}
	return listed
}

// later reports whether a tells of a later state of an execution than b.
func later(a, b driver.Status) bool {
	if a.State.Terminal() != b.State.Terminal() {
		return a.State.Terminal()
	}
	return a.Updated.After(b.Updated)
}

// errOtherEvent: a message that is an event, but not a status change of Step Functions.
var errOtherEvent = errors.New("not a Step Functions status change event")

// noticeOf reads one message: a "Step Functions Execution Status Change" event as EventBridge
// sends it (raw delivery), or inside the envelope of an SNS notification (without raw delivery).
func noticeOf(body string) (driver.Listed, error) {
	var envelope struct {
		Type    string `json:"Type"`
		Message string `json:"Message"`
	}
	if err := json.Unmarshal([]byte(body), &envelope); err != nil {
		return driver.Listed{}, fmt.Errorf("not JSON: %w", err)
	}
	if envelope.Type == "Notification" && envelope.Message != "" {
		body = envelope.Message
	}
	var event struct {
		Source     string `json:"source"`
		DetailType string `json:"detail-type"`
		Detail     struct {
			ExecutionARN string          `json:"executionArn"`
			Status       string          `json:"status"`
			StartDate    json.RawMessage `json:"startDate"`
			StopDate     json.RawMessage `json:"stopDate"`
			RedriveDate  json.RawMessage `json:"redriveDate"`
		} `json:"detail"`
	}
	if err := json.Unmarshal([]byte(body), &event); err != nil {
		return driver.Listed{}, fmt.Errorf("not an event: %w", err)
	}
	if event.Source != statesSource || event.DetailType != statusChange {
		return driver.Listed{}, fmt.Errorf("%w: source %q, detail-type %q", errOtherEvent, event.Source, event.DetailType)
	}
	d := event.Detail
	if _, _, ok := parseExecutionARN(d.ExecutionARN); !ok {
		return driver.Listed{}, fmt.Errorf("executionArn %q is not the ARN of a Standard execution", d.ExecutionARN)
	}
	if d.Status == "" {
		return driver.Listed{}, errors.New("the event has no status")
	}
	start, ok := epochMillis(d.StartDate)
	if !ok || start == nil {
		return driver.Listed{}, fmt.Errorf("startDate %s is not a time in epoch milliseconds", d.StartDate)
	}
	stop, ok := epochMillis(d.StopDate)
	if !ok {
		return driver.Listed{}, fmt.Errorf("stopDate %s is not a time in epoch milliseconds", d.StopDate)
	}
	redrive, _ := epochMillis(d.RedriveDate) // a later addition of AWS's: read when it can be
	item := types.ExecutionListItem{
		ExecutionArn: aws.String(d.ExecutionARN), Status: types.ExecutionStatus(d.Status),
		StartDate: start, StopDate: stop, RedriveDate: redrive,
	}
	return driver.Listed{Ref: driver.Ref{ID: d.ExecutionARN}, Status: listedStatus(item)}, nil
}

// epochMillis reads a time in milliseconds since the epoch, as events write them; nil for null or
// absent, and ok false for anything else.
func epochMillis(raw json.RawMessage) (t *time.Time, ok bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	ms, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || ms < 0 {
		return nil, false
	}
	at := time.UnixMilli(int64(ms)).UTC()
	return &at, true
}

// delete deletes the messages received, in one call; what it fails to delete comes again after
// the visibility timeout, and a notice told twice is harmless.
func (ev *statusEvents) delete(ctx context.Context, q queue, messages []sqstypes.Message) {
	if len(messages) == 0 {
		return
	}
	entries := make([]sqstypes.DeleteMessageBatchRequestEntry, len(messages))
	for i, m := range messages {
		entries[i] = sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle}
	}
	out, err := ev.sqs.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(q.url), Entries: entries})
	if err == nil && len(out.Failed) > 0 {
		err = fmt.Errorf("%d of %d failed: %s", len(out.Failed), len(entries), aws.ToString(out.Failed[0].Message))
	}
	if err != nil && ctx.Err() == nil {
		ev.log.Warn("stepfunctions: deleting received status change events", "queue", q.name, "err", err)
	}
}

// open makes the replica's queue: created with its expiry, a policy that lets only the topic send
// to it, and subscribed to the topic. What it made before it failed is deleted again.
func (ev *statusEvents) open(ctx context.Context) (q queue, err error) {
	q.name = ev.prefix + randomSuffix()
	created, err := ev.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{
		QueueName: aws.String(q.name),
		Attributes: map[string]string{
			string(sqstypes.QueueAttributeNameMessageRetentionPeriod): strconv.Itoa(int(messageRetention / time.Second)),
		},
		Tags: map[string]string{expiresTag: expiry(time.Now())},
	})
	if err != nil {
		return queue{}, fmt.Errorf("creating the queue %s: %w", q.name, err)
	}
	q.url = aws.ToString(created.QueueUrl)
	defer func() {
		if err != nil {
			ev.remove(q)
			q = queue{}
		}
	}()
	attrs, err := ev.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(q.url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return q, fmt.Errorf("reading the ARN of the queue %s: %w", q.name, err)
	}
	q.arn = attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
	if _, err := ev.sqs.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{
		QueueUrl:   aws.String(q.url),
		Attributes: map[string]string{string(sqstypes.QueueAttributeNamePolicy): queuePolicy(q.arn, ev.topic)},
	}); err != nil {
		return q, fmt.Errorf("letting the topic send to the queue %s: %w", q.name, err)
	}
	sub, err := ev.sns.Subscribe(ctx, &sns.SubscribeInput{
		TopicArn: aws.String(ev.topic), Protocol: aws.String("sqs"), Endpoint: aws.String(q.arn),
		Attributes:            map[string]string{"RawMessageDelivery": "true"},
		ReturnSubscriptionArn: true,
	})
	if err != nil {
		return q, fmt.Errorf("subscribing the queue %s to the topic %s: %w", q.name, ev.topic, err)
	}
	q.subscription = aws.ToString(sub.SubscriptionArn)
	if len(q.subscription) <= maxTagValue {
		if _, err := ev.sqs.TagQueue(ctx, &sqs.TagQueueInput{
			QueueUrl: aws.String(q.url), Tags: map[string]string{subscriptionTag: q.subscription},
		}); err != nil {
			return q, fmt.Errorf("tagging the queue %s with its subscription: %w", q.name, err)
		}
	}
	ev.mu.Lock()
	closed := ev.closed
	if !closed {
		ev.q = q
	}
	ev.mu.Unlock()
	if closed {
		return q, errors.New("the engine is closed")
	}
	ev.log.Info("stepfunctions: receiving status change events", "queue", q.name, "topic", ev.topic)
	return q, nil
}

// queuePolicy lets only the topic send to the queue.
func queuePolicy(queueARN, topic string) string {
	p, _ := json.Marshal(map[string]any{
		"Version": "2012-10-17",
		"Statement": []any{map[string]any{
			"Sid": "TopicSends", "Effect": "Allow",
			"Principal": map[string]string{"Service": "sns.amazonaws.com"},
			"Action":    "sqs:SendMessage", "Resource": queueARN,
			"Condition": map[string]any{"ArnEquals": map[string]string{"aws:SourceArn": topic}},
		}},
	})
	return string(p)
}

func randomSuffix() string {
	b := make([]byte, queueSuffix/2)
	_, _ = crand.Read(b)
	return hex.EncodeToString(b)
}

func expiry(now time.Time) string { return now.Add(queueLifetime).UTC().Format(time.RFC3339) }

// upkeep keeps the queue from being taken for a dead replica's, and deletes the expired queues of
// the prefix, at once and then every queueSweep, until ctx ends.
func (ev *statusEvents) upkeep(ctx context.Context) {
	ev.sweep(ctx)
	renew := time.NewTicker(queueRenewal)
	defer renew.Stop()
	sweep := time.NewTimer(jitter(queueSweep))
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-renew.C:
			ev.renew(ctx)
		case <-sweep.C:
			ev.sweep(ctx)
			sweep.Reset(jitter(queueSweep))
		}
	}
}

// renew moves the queue's expiry queueLifetime ahead.
func (ev *statusEvents) renew(ctx context.Context) {
	ev.mu.Lock()
	q := ev.q
	ev.mu.Unlock()
	if q.url == "" {
		return
	}
	if _, err := ev.sqs.TagQueue(ctx, &sqs.TagQueueInput{
		QueueUrl: aws.String(q.url), Tags: map[string]string{expiresTag: expiry(time.Now())},
	}); err != nil && ctx.Err() == nil {
		ev.log.Warn("stepfunctions: renewing the expiry of the queue of status change events", "queue", q.name, "err", err)
	}
}

// sweep deletes the queues of the prefix whose expiry passed, and their subscriptions to the topic:
// those of replicas that ended without deleting theirs. A queue without the tag is not one of
// taskgate's, and is left alone.
func (ev *statusEvents) sweep(ctx context.Context) {
	ev.mu.Lock()
	own := ev.q.url
	ev.mu.Unlock()
	var urls []string
	in := &sqs.ListQueuesInput{QueueNamePrefix: aws.String(ev.prefix), MaxResults: aws.Int32(1000)}
	for {
		out, err := ev.sqs.ListQueues(ctx, in)
		if err != nil {
			if ctx.Err() == nil {
				ev.log.Warn("stepfunctions: listing the queues of status change events to delete expired ones", "prefix", ev.prefix, "err", err)
			}
			return
		}
		urls = append(urls, out.QueueUrls...)
		if aws.ToString(out.NextToken) == "" {
			break
		}
		in.NextToken = out.NextToken
	}
	now := time.Now()
	for _, url := range urls {
		if url == own {
			continue
		}
		tags, err := ev.sqs.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(url)})
		if err != nil {
			continue // deleted meanwhile, or not readable: not ours to judge
		}
		at, err := time.Parse(time.RFC3339, tags.Tags[expiresTag])
		if err != nil || now.Before(at) {
			continue
		}
		if sub := tags.Tags[subscriptionTag]; sub != "" {
			// SNS keeps a subscription whose queue is gone, and tries it at every publish.
			var missing *snstypes.NotFoundException
			if _, err := ev.sns.Unsubscribe(ctx, &sns.UnsubscribeInput{SubscriptionArn: aws.String(sub)}); err != nil && !errors.As(err, &missing) {
				if ctx.Err() == nil {
					ev.log.Warn("stepfunctions: unsubscribing an expired queue of status change events", "queue", url, "err", err)
				}
				continue
			}
		}
		if _, err := ev.sqs.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(url)}); err == nil {
			ev.log.Info("stepfunctions: deleted an expired queue of status change events", "queue", url, "expired", at)
		}
	}
}

// forget drops the queue q, gone, and its subscription.
func (ev *statusEvents) forget(q queue) {
	ev.mu.Lock()
	if ev.q == q {
		ev.q = queue{}
	}
	ev.mu.Unlock()
	if q.subscription != "" {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		_, _ = ev.sns.Unsubscribe(ctx, &sns.UnsubscribeInput{SubscriptionArn: aws.String(q.subscription)})
	}
}

// remove unsubscribes and deletes q, within cleanupTimeout.
func (ev *statusEvents) remove(q queue) error {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	var errs []error
	if q.subscription != "" {
		var missing *snstypes.NotFoundException
		if _, err := ev.sns.Unsubscribe(ctx, &sns.UnsubscribeInput{SubscriptionArn: aws.String(q.subscription)}); err != nil && !errors.As(err, &missing) {
			errs = append(errs, fmt.Errorf("unsubscribing %s: %w", q.subscription, err))
		}
	}
	if q.url != "" {
		var gone *sqstypes.QueueDoesNotExist
		if _, err := ev.sqs.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(q.url)}); err != nil && !errors.As(err, &gone) {
			errs = append(errs, fmt.Errorf("deleting the queue %s: %w", q.name, err))
		}
	}
	return errors.Join(errs...)
}

// close deletes the replica's queue and its subscription; Notices no longer makes one.
func (ev *statusEvents) close() error {
	ev.mu.Lock()
	q := ev.q
	ev.q, ev.closed = queue{}, true
	ev.mu.Unlock()
	if q.url == "" {
		return nil
	}
	if err := ev.remove(q); err != nil {
		ev.log.Warn("stepfunctions: deleting the queue of status change events; it expires on its own", "queue", q.name, "err", err)
		return fmt.Errorf("stepfunctions: %w (the queue expires on its own: another replica deletes it within an hour of %s)", err, expiry(time.Now()))
	}
	ev.log.Info("stepfunctions: deleted the queue of status change events", "queue", q.name)
	return nil
}

func (ev *statusEvents) isClosed() bool {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	return ev.closed
}

// permanent says what to do about err, when retrying will not mend it: the topic does not exist,
// or the credentials may not do what the event source needs. "" otherwise.
func permanent(err error) string {
	var notFound *snstypes.NotFoundException
	if errors.As(err, &notFound) {
		return "the topic does not exist: check events.topicArn, and that the account of the credentials (or of the assumed role) may reach it"
	}
	var api smithy.APIError
	var resp *awshttp.ResponseError
	denied := errors.As(err, &resp) && resp.HTTPStatusCode() == http.StatusForbidden
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "AccessDenied", "AccessDeniedException", "AuthorizationError", "KMSAccessDenied", "KmsAccessDenied",
			"InvalidClientTokenId", "UnrecognizedClientException", "InvalidSecurity":
			denied = true
		case "InvalidParameter", "InvalidParameterValue", "InvalidAttributeName", "InvalidAttributeValue":
			return "SNS or SQS refused the request: check events.topicArn (a standard topic) and events.queuePrefix"
		}
	}
	if denied {
		return "the credentials (the engine block's, or its roleArn's) may not do what the event source needs: " +
			"grant what `taskgate iam-policy` prints for the mapping (sqs:CreateQueue and the other queue actions on the queues of events.queuePrefix, " +
			"sqs:ListQueues, sns:Subscribe and sns:Unsubscribe on the topic)"
	}
	return ""
}

// jitter is d give or take a tenth, so that replicas do not all call at once.
func jitter(d time.Duration) time.Duration {
	return d - d/10 + time.Duration(rand.Int64N(int64(d/5)+1))
}
