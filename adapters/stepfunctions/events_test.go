package stepfunctions_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
	"github.com/taskgate/taskgate/internal/sfnevents"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mapping"
)

// noticeDelay is how soon after an execution's end every replica must have heard of it.
const noticeDelay = 2 * time.Second

// provision makes the topic and the rule of an event source in the test's endpoint, restricted to
// the state machines given (other tests' executions then send this test nothing), and removes
// them when the test ends.
func provision(t *testing.T, machines ...string) *sfnevents.Source {
	t.Helper()
	s, err := sfnevents.Provision(t.Context(), sfnevents.Options{Endpoint: testenv.SFNEndpoint(t), StateMachineARNs: machines})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Remove(context.Background()) })
	return s
}

// eventsEngine is a "replica": an engine of the endpoint that receives the topic's events into a
// queue of prefix.
func eventsEngine(t *testing.T, topic, prefix string) driver.Conn {
	t.Helper()
	endpoint := testenv.SFNEndpoint(t)
	e, err := stepfunctions.New(t.Context(), stepfunctions.Config{Endpoint: endpoint,
		Events: stepfunctions.Events{TopicARN: topic, QueuePrefix: prefix}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// hearing runs an engine's Notices and keeps what it heard.
type hearing struct {
	mu       sync.Mutex
	receives int
	heard    []heardNotice
	calls    []heardCall
	wake     chan struct{}
	done     chan struct{}
	err      error
	stop     context.CancelFunc
}

type heardNotice struct {
	listed driver.Listed
	at     time.Time // when heard was called
}

// heardCall is one call of heard: the time it was given, and the executions it told of.
type heardCall struct {
	told time.Time
	refs []string
}

// listen runs e.Notices until the test ends (or stop), and waits for its first receive: its queue
// is subscribed by then.
func listen(t *testing.T, e driver.Conn) *hearing {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	h := &hearing{wake: make(chan struct{}, 1), done: make(chan struct{}), stop: cancel}
	go func() {
		defer close(h.done)
		err := e.(driver.EventSource).Notices(ctx, func(at time.Time, changed []driver.Listed) {
			now := time.Now()
			h.mu.Lock()
			h.receives++
			call := heardCall{told: at}
			for _, l := range changed {
				h.heard = append(h.heard, heardNotice{l, now})
				call.refs = append(call.refs, l.Ref.ID)
			}
			h.calls = append(h.calls, call)
			h.mu.Unlock()
			select {
			case h.wake <- struct{}{}:
			default:
			}
		})
		h.mu.Lock()
		h.err = err
		h.mu.Unlock()
	}()
	t.Cleanup(func() {
		cancel()
		<-h.done
		if h.err != nil && !errors.Is(h.err, context.Canceled) {
			t.Errorf("Notices: %v", h.err)
		}
	})
	h.until(t, 30*time.Second, "the first receive", func() bool { return h.receives > 0 })
	return h
}

// until waits for cond (read under the lock) for at most d.
func (h *hearing) until(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		h.mu.Lock()
		ok, err := cond(), h.err
		h.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-h.wake:
		case <-h.done:
			t.Fatalf("Notices returned before %s: %v", what, err)
		case <-deadline.C:
			t.Fatalf("no %s in %s", what, d)
		}
	}
}

// end waits for the notice of r's end, and checks that it came at most noticeDelay after the end
// (the stop date the notice tells, as the endpoint's clock, this machine's, read it).
func (h *hearing) end(t *testing.T, r driver.Ref) heardNotice {
	t.Helper()
	var found heardNotice
	h.until(t, 30*time.Second, "notice of the end of "+r.ID, func() bool {
		for _, n := range h.heard {
			if n.listed.Ref == r && n.listed.Status.State.Terminal() {
				found = n
				return true
			}
		}
		return false
	})
	if late := found.at.Sub(found.listed.Status.Updated); late > noticeDelay {
		t.Errorf("the end of %s (at %s) was heard %s after it, more than %s", r.ID, found.listed.Status.Updated, late, noticeDelay)
	}
	return found
}

// clients of the endpoint's SQS and SNS, to look at what the engines made.
// oneReplica is an engine listening to a topic of its own (topic), with the queue prefix it was
// given: what it hears, the queue client, and the one queue it made.
func oneReplica(t *testing.T) (h *hearing, sq *sqs.Client, queues []string, topic, prefix string) {
	t.Helper()
	src := provision(t)
	prefix = testPrefix()
	h = listen(t, eventsEngine(t, src.TopicARN, prefix))
	sq, _ = queueClients(t)
	if queues = queuesOf(t, sq, prefix); len(queues) != 1 {
		t.Fatalf("queues %v, want the replica's", queues)
	}
	return h, sq, queues, src.TopicARN, prefix
}

func queueClients(t *testing.T) (*sqs.Client, *sns.Client) {
	t.Helper()
	endpoint := testenv.SFNEndpoint(t)
	cfg, err := config.LoadDefaultConfig(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(endpoint) }),
		sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = aws.String(endpoint) })
}

func queuesOf(t *testing.T, c *sqs.Client, prefix string) []string {
	t.Helper()
	out, err := c.ListQueues(t.Context(), &sqs.ListQueuesInput{QueueNamePrefix: aws.String(prefix)})
	if err != nil {
		t.Fatal(err)
	}
	return out.QueueUrls
}

func subscriptionsOf(t *testing.T, c *sns.Client, topic string) []string {
	t.Helper()
	out, err := c.ListSubscriptionsByTopic(t.Context(), &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topic)})
	if err != nil {
		t.Fatal(err)
	}
	var endpoints []string
	for _, s := range out.Subscriptions {
		endpoints = append(endpoints, aws.ToString(s.Endpoint))
	}
	return endpoints
}

func testPrefix() string { return "tg-test-" + randomHex(4) + "-" }

// Two replicas (two engines, two queues) hear of a real execution's end within noticeDelay, with
// the execution's Ref and its ended status: one that succeeds, one that fails, one stopped
// (StopExecution), one that times out.
func TestEventsReachEveryReplica(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	starter := newEngine(t, nil)
	arns := createExamples(t, sfnClient(t, starter), sfnexamples.WaitAndEcho, sfnexamples.WaitAndFail, sfnexamples.Timeout)
	src := provision(t, arns[sfnexamples.WaitAndEcho], arns[sfnexamples.WaitAndFail], arns[sfnexamples.Timeout])
	prefix := testPrefix()
	replicas := []*hearing{
		listen(t, eventsEngine(t, src.TopicARN, prefix)),
		listen(t, eventsEngine(t, src.TopicARN, prefix)),
	}
	sq, sn := queueClients(t)
	if q, s := queuesOf(t, sq, prefix), subscriptionsOf(t, sn, src.TopicARN); len(q) != 2 || len(s) != 2 {
		t.Fatalf("two replicas made the queues %v and the subscriptions %v, want two of each", q, s)
	}

	echo, fail := stateMachine(t, arns[sfnexamples.WaitAndEcho]), stateMachine(t, arns[sfnexamples.WaitAndFail])
	timeout := stateMachine(t, arns[sfnexamples.Timeout])
	for _, c := range []struct {
		name   string
		target driver.Target
		input  string
		stop   bool
		state  driver.State
		native string
	}{
		{"succeeded", echo, `{"seconds":0,"text":"hi"}`, false, driver.Succeeded, "SUCCEEDED"},
		{"failed", fail, `{"seconds":0,"reason":"no"}`, false, driver.Failed, "FAILED"},
		{"aborted", echo, `{"seconds":300,"text":"never"}`, true, driver.Cancelled, "ABORTED"},
		{"timed out", timeout, `{"seconds":300}`, false, driver.Failed, "TIMED_OUT"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ref, err := starter.Start(ctx, c.target, driver.StartRequest{Input: json.RawMessage(c.input)})
			if err != nil {
				t.Fatal(err)
			}
			if c.stop {
				if err := starter.Cancel(ctx, c.target, ref, "test"); err != nil {
					t.Fatal(err)
				}
			}
			var heard []heardNotice
			for _, h := range replicas {
				heard = append(heard, h.end(t, ref))
			}
			o, err := starter.Outcome(ctx, c.target, ref)
			if err != nil {
				t.Fatal(err)
			}
			for i, n := range heard {
				st := n.listed.Status
				// (moto's DescribeExecution of a timed-out execution has no stopDate: its Updated
				// is then its start, and the notice's the end.)
				sameEnd := st.Updated.Equal(o.Status.Updated) || (c.native == "TIMED_OUT" && o.Status.Updated.Equal(o.Status.Started))
				if st.State != c.state || st.Native != c.native || !st.Started.Equal(o.Status.Started) || !sameEnd {
					t.Errorf("replica %d heard %+v, want %s (%s), started %s and ended %s as DescribeExecution reads it",
						i, st, c.state, c.native, o.Status.Started, o.Status.Updated)
				}
				t.Logf("replica %d heard of the end %s after it", i, n.at.Sub(st.Updated).Round(time.Millisecond))
			}
		})
	}
}

// A later Notices receives from the same queue, and Close deletes it and its subscription to the
// topic.
func TestEventsCloseDeletesQueue(t *testing.T) {
	t.Parallel()
	src := provision(t)
	prefix := testPrefix()
	e := eventsEngine(t, src.TopicARN, prefix)
	h := listen(t, e)
	sq, sn := queueClients(t)
	queues := queuesOf(t, sq, prefix)
	if len(queues) != 1 || !slices.Equal(subscriptionsOf(t, sn, src.TopicARN), []string{queueARN(t, sq, queues[0])}) {
		t.Fatalf("queues %v, subscriptions %v: want one queue, subscribed", queues, subscriptionsOf(t, sn, src.TopicARN))
	}
	h.stop()
	<-h.done
	// Notices again: the same queue serves.
	h = listen(t, e)
	if again := queuesOf(t, sq, prefix); !slices.Equal(again, queues) {
		t.Errorf("a second Notices receives from %v, want the first one's %v", again, queues)
	}
	h.stop()
	<-h.done
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if q, s := queuesOf(t, sq, prefix), subscriptionsOf(t, sn, src.TopicARN); len(q) != 0 || len(s) != 0 {
		t.Errorf("after Close: queues %v, subscriptions %v; want none", q, s)
	}
	if err := e.(driver.EventSource).Notices(t.Context(), func(time.Time, []driver.Listed) {}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Notices after Close: %v, want an error saying the engine is closed", err)
	}
}

func queueARN(t *testing.T, c *sqs.Client, url string) string {
	t.Helper()
	out, err := c.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{"QueueArn"}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Attributes["QueueArn"]
}

// A replica deletes the expired queues of its prefix (those of replicas that ended without
// deleting theirs) and their subscriptions, and keeps the others: unexpired, untagged, or of
// another prefix. Its own queue's expiry is ahead.
func TestEventsDeleteExpiredQueues(t *testing.T) {
	t.Parallel()
	src := provision(t)
	sq, _ := queueClients(t)
	prefix, other := testPrefix(), testPrefix()
	past, future := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339), time.Now().Add(5*time.Minute).UTC().Format(time.RFC3339)
	made := map[string]string{}
	for name, expires := range map[string]string{prefix + "expired": past, prefix + "fresh": future, prefix + "untagged": "", other + "expired": past} {
		in := &sqs.CreateQueueInput{QueueName: aws.String(name)}
		if expires != "" {
			in.Tags = map[string]string{"taskgate:expires": expires}
		}
		out, err := sq.CreateQueue(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		made[name] = aws.ToString(out.QueueUrl)
		t.Cleanup(func() { _, _ = sq.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: out.QueueUrl}) })
	}
	// The expired queue was subscribed to the topic: the subscription goes with it.
	_, sn := queueClients(t)
	sub, err := sn.Subscribe(t.Context(), &sns.SubscribeInput{TopicArn: aws.String(src.TopicARN), Protocol: aws.String("sqs"),
		Endpoint: aws.String(queueARN(t, sq, made[prefix+"expired"])), ReturnSubscriptionArn: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sq.TagQueue(t.Context(), &sqs.TagQueueInput{QueueUrl: aws.String(made[prefix+"expired"]),
		Tags: map[string]string{"taskgate:subscription": aws.ToString(sub.SubscriptionArn)}}); err != nil {
		t.Fatal(err)
	}
	listen(t, eventsEngine(t, src.TopicARN, prefix))
	deadline := time.Now().Add(10 * time.Second)
	for slices.Contains(queuesOf(t, sq, prefix), made[prefix+"expired"]) {
		if time.Now().After(deadline) {
			t.Fatalf("the expired queue of the prefix is still there after 10 s: %v", queuesOf(t, sq, prefix))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if subs := subscriptionsOf(t, sn, src.TopicARN); slices.Contains(subs, queueARNOf(made[prefix+"expired"])) || len(subs) != 1 {
		t.Errorf("subscriptions %v: want only the replica's, not the expired queue's", subs)
	}
	left := append(queuesOf(t, sq, prefix), queuesOf(t, sq, other)...)
	for _, keep := range []string{prefix + "fresh", prefix + "untagged", other + "expired"} {
		if !slices.Contains(left, made[keep]) {
			t.Errorf("%s was deleted; left: %v", keep, left)
		}
	}
	var own string
	for _, u := range left {
		if !slices.Contains([]string{made[prefix+"fresh"], made[prefix+"untagged"], made[other+"expired"]}, u) {
			own = u
		}
	}
	tags, err := sq.ListQueueTags(t.Context(), &sqs.ListQueueTagsInput{QueueUrl: aws.String(own)})
	if err != nil {
		t.Fatalf("the replica's own queue (%q among %v): %v", own, left, err)
	}
	at, err := time.Parse(time.RFC3339, tags.Tags["taskgate:expires"])
	if err != nil || time.Until(at) < 9*time.Minute || time.Until(at) > 11*time.Minute {
		t.Errorf("the replica's queue expires at %q, want about 10 minutes ahead", tags.Tags["taskgate:expires"])
	}
}

// Messages that are no status change event of Step Functions are skipped, and deleted, without
// failing: text that is not JSON, events of other sources or kinds, an event whose ARN is no
// execution's. A status change inside an SNS envelope (a subscription without raw delivery) is
// read like one delivered raw.
func TestEventsSkipMalformedMessages(t *testing.T) {
	t.Parallel()
	h, sq, queues, topic, _ := oneReplica(t)
	const (
		raw       = "arn:aws:states:us-east-1:123456789012:execution:m:raw"
		enveloped = "arn:aws:states:us-east-1:123456789012:execution:m:enveloped"
	)
	event := func(source, detailType, arn, status string) string {
		b, _ := json.Marshal(map[string]any{"version": "0", "id": randomHex(8), "detail-type": detailType, "source": source,
			"account": "123456789012", "time": "2026-01-02T03:04:05Z", "region": "us-east-1", "resources": []string{arn},
			"detail": map[string]any{"executionArn": arn, "stateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:m",
				"name": "x", "status": status, "startDate": 1767322800000, "stopDate": 1767322805000}})
		return string(b)
	}
	envelope, _ := json.Marshal(map[string]string{"Type": "Notification", "MessageId": randomHex(8), "TopicArn": topic,
		"Message": event("aws.states", sfnevents.DetailType, enveloped, "TIMED_OUT")})
	for _, body := range []string{
		"not JSON at all",
		`{"Type":"Notification","Message":"{not json"}`,
		event("aws.ec2", "EC2 Instance State-change Notification", raw, "SUCCEEDED"),
		event("aws.states", "Step Functions State Machine Change", raw, "SUCCEEDED"),
		event("aws.states", sfnevents.DetailType, "arn:aws:states:us-east-1:123456789012:stateMachine:m", "SUCCEEDED"),
		event("aws.states", sfnevents.DetailType, raw, ""),
		string(envelope),
		event("aws.states", sfnevents.DetailType, raw, "SUCCEEDED"),
	} {
		if _, err := sq.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(queues[0]), MessageBody: aws.String(body)}); err != nil {
			t.Fatal(err)
		}
	}
	h.until(t, 10*time.Second, "the two status changes", func() bool { return len(h.heard) >= 2 })
	time.Sleep(100 * time.Millisecond) // anything else heard would be a mistake
	h.mu.Lock()
	heard := slices.Clone(h.heard)
	h.mu.Unlock()
	got := map[string]driver.Status{}
	for _, n := range heard {
		got[n.listed.Ref.ID] = n.listed.Status
	}
	if len(heard) != 2 || got[raw].State != driver.Succeeded || got[enveloped].State != driver.Failed || got[enveloped].Native != "TIMED_OUT" {
		t.Errorf("heard %+v, want %s SUCCEEDED and %s TIMED_OUT", heard, raw, enveloped)
	}
	if st := got[raw]; !st.Started.Equal(time.UnixMilli(1767322800000)) || !st.Updated.Equal(time.UnixMilli(1767322805000)) {
		t.Errorf("%s started %s and changed %s, want the event's startDate and stopDate", raw, st.Started, st.Updated)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err := sq.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(queues[0]),
			AttributeNames: []sqstypes.QueueAttributeName{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"}})
		if err != nil {
			t.Fatal(err)
		}
		if out.Attributes["ApproximateNumberOfMessages"] == "0" && out.Attributes["ApproximateNumberOfMessagesNotVisible"] == "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the messages were not all deleted: %v", out.Attributes)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A topic that does not exist is an error of Notices that says so, not a retry forever.
func TestEventsMissingTopic(t *testing.T) {
	t.Parallel()
	prefix := testPrefix()
	e := eventsEngine(t, "arn:aws:sns:us-east-1:123456789012:taskgate-no-such-topic-"+randomHex(4), prefix)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	err := e.(driver.EventSource).Notices(ctx, func(time.Time, []driver.Listed) {})
	if err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "the topic does not exist") {
		t.Errorf("Notices on a missing topic: %v, want an error saying the topic does not exist", err)
	}
	sq, _ := queueClients(t)
	if q := queuesOf(t, sq, prefix); len(q) > 0 {
		t.Errorf("the queue made for the missing topic was left: %v", q)
	}
}

// One Notices at a time: a second one while the first receives is an error, and the first goes on.
func TestEventsOneNoticesAtATime(t *testing.T) {
	t.Parallel()
	src := provision(t)
	e := eventsEngine(t, src.TopicARN, testPrefix())
	listen(t, e)
	if err := e.(driver.EventSource).Notices(t.Context(), func(time.Time, []driver.Listed) {}); err == nil || !strings.Contains(err.Error(), "one at a time") {
		t.Errorf("a second Notices: %v, want an error", err)
	}
}

// The brief's block decodes to its Events, and an engine block without events has no event
// source: Notices answers ErrUnsupported, with no call.
func TestEventsConfig(t *testing.T) {
	set, err := mapping.Parse("m.yaml", []byte(`engines:
  aws:
    stepfunctions:
      region: eu-west-1
      events: {topicArn: "arn:aws:sns:eu-west-1:210987654321:taskgate-sfn-events", queuePrefix: "taskgate-", endpoint: "http://127.0.0.1:5000"}
  plain:
    stepfunctions: {region: eu-west-1}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := stepfunctions.Events{TopicARN: "arn:aws:sns:eu-west-1:210987654321:taskgate-sfn-events", QueuePrefix: "taskgate-", Endpoint: "http://127.0.0.1:5000"}
	if got := set.Engines["aws"].Config.(stepfunctions.Config).Events; got != want {
		t.Errorf("events decoded as %+v, want %+v", got, want)
	}
	conn, err := set.Engines["plain"].Config.Open(t.Context(), driver.OpenOptions{Env: driver.Env{"AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=x"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.(driver.EventSource).Notices(t.Context(), func(time.Time, []driver.Listed) { t.Error("heard something") })
	if !errors.Is(err, driver.ErrUnsupported) || !strings.Contains(err.Error(), "add events: {topicArn: ARN}") {
		t.Errorf("Notices without events: %v, want ErrUnsupported saying what to add", err)
	}
}

// New refuses a topic of another region than the engine's (the region came from the environment,
// so the mapping could not tell) and a queue prefix SQS would refuse.
func TestEventsNewErrors(t *testing.T) {
	for _, c := range []struct {
		events stepfunctions.Events
		want   string
	}{
		{stepfunctions.Events{TopicARN: "arn:aws:sns:eu-west-1:123456789012:t"},
			"events: the topic arn:aws:sns:eu-west-1:123456789012:t is in region eu-west-1, but this Step Functions engine uses region us-east-1: " +
				"Step Functions sends its events to the EventBridge of its own region, whose rules publish to topics of that region: name a topic of us-east-1"},
		{stepfunctions.Events{TopicARN: "arn:aws:sns:us-east-1:123456789012:t", QueuePrefix: "a b"},
			`events: queuePrefix "a b": want at most 64 letters, digits, - and _`},
		{stepfunctions.Events{TopicARN: "arn:aws:sqs:us-east-1:123456789012:t"},
			`events: "arn:aws:sqs:us-east-1:123456789012:t" is not an SNS topic ARN: want arn:PARTITION:sns:REGION:ACCOUNT:NAME`},
	} {
		_, err := stepfunctions.New(t.Context(), stepfunctions.Config{Env: driver.Env{"AWS_REGION=us-east-1"}, Events: c.events})
		if err == nil || err.Error() != c.want {
			t.Errorf("New with %+v: %v\nwant %s", c.events, err, c.want)
		}
	}
}

// queueARNOf is the ARN of a queue of the test endpoint's account, from its URL.
func queueARNOf(url string) string {
	parts := strings.Split(url, "/")
	return "arn:aws:sqs:us-east-1:" + parts[len(parts)-2] + ":" + parts[len(parts)-1]
}

// What heard is told is true as of the time it is given: every notice sent to the queue before
// that time was told by then, in that call or an earlier one, also when a backlog comes in full
// batches (which may leave more behind).
func TestEventsToldTimes(t *testing.T) {
	t.Parallel()
	h, sq, queues, _, _ := oneReplica(t)
	// Five batches of nine at once: a backlog that comes in full receives.
	var (
		mu   sync.Mutex
		sent = map[string]time.Time{}
		wg   sync.WaitGroup
	)
	for b := range 5 {
		wg.Go(func() {
			var entries []sqstypes.SendMessageBatchRequestEntry
			for i := range 9 {
				arn := "arn:aws:states:us-east-1:123456789012:execution:m:told-" + strconv.Itoa(9*b+i)
				body, _ := json.Marshal(map[string]any{"source": "aws.states", "detail-type": sfnevents.DetailType,
					"detail": map[string]any{"executionArn": arn, "status": "SUCCEEDED", "startDate": 1767322800000, "stopDate": 1767322805000}})
				entries = append(entries, sqstypes.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(string(body))})
			}
			out, err := sq.SendMessageBatch(t.Context(), &sqs.SendMessageBatchInput{QueueUrl: aws.String(queues[0]), Entries: entries})
			if err != nil || len(out.Failed) > 0 {
				t.Errorf("sending: %v %v", err, out)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for i := range 9 {
				sent["arn:aws:states:us-east-1:123456789012:execution:m:told-"+strconv.Itoa(9*b+i)] = time.Now()
			}
		})
	}
	wg.Wait()
	h.until(t, 20*time.Second, "all 45 notices", func() bool { return len(h.heard) >= 45 })
	h.mu.Lock()
	calls := slices.Clone(h.calls)
	h.mu.Unlock()
	toldIn := map[string]int{}
	for i, c := range calls {
		for _, r := range c.refs {
			toldIn[r] = i
		}
	}
	var sizes []int
	for _, c := range calls {
		if len(c.refs) > 0 {
			sizes = append(sizes, len(c.refs))
		}
	}
	t.Logf("the notices came in calls of %v", sizes)
	for i, c := range calls {
		for arn, at := range sent {
			if at.Before(c.told) && toldIn[arn] > i {
				t.Errorf("call %d said nothing else had changed as of %s, but %s, sent at %s, came in call %d",
					i, c.told.Format(time.StampMicro), arn, at.Format(time.StampMicro), toldIn[arn])
			}
		}
	}
}

// A replica whose queue was deleted (another replica took it for expired) makes another,
// subscribed in place of the first, and hears on.
func TestEventsQueueGone(t *testing.T) {
	t.Parallel()
	h, sq, first, topic, prefix := oneReplica(t)
	_, sn := queueClients(t)
	if _, err := sq.DeleteQueue(t.Context(), &sqs.DeleteQueueInput{QueueUrl: aws.String(first[0])}); err != nil {
		t.Fatal(err)
	}
	var second []string
	deadline := time.Now().Add(15 * time.Second)
	for {
		second = queuesOf(t, sq, prefix)
		if len(second) == 1 && second[0] != first[0] && slices.Equal(subscriptionsOf(t, sn, topic), []string{queueARN(t, sq, second[0])}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after its queue was deleted: queues %v, subscriptions %v; want a new queue, alone subscribed", second, subscriptionsOf(t, sn, topic))
		}
		time.Sleep(50 * time.Millisecond)
	}
	const arn = "arn:aws:states:us-east-1:123456789012:execution:m:after-the-queue"
	body, _ := json.Marshal(map[string]any{"source": "aws.states", "detail-type": sfnevents.DetailType,
		"detail": map[string]any{"executionArn": arn, "status": "ABORTED", "startDate": 1767322800000, "stopDate": 1767322805000}})
	if _, err := sn.Publish(t.Context(), &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(string(body))}); err != nil {
		t.Fatal(err)
	}
	h.until(t, 10*time.Second, "the notice through the new queue", func() bool {
		return slices.ContainsFunc(h.heard, func(n heardNotice) bool { return n.listed.Ref.ID == arn })
	})
}
