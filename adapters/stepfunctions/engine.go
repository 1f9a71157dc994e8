package stepfunctions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/taskgate/taskgate/adapters/driver"
)

// Retries of one API call. Throttling retries start at 1 s (the SDK's throttle-aware backoff) and
// other transient failures at 50 ms, doubling with full jitter up to maxBackoff: a call that stays
// throttled gives up after about 6.5 s (13 s at most) and the caller sees ErrThrottled. Reads of
// executions are not retried when throttled: each retry would spend more of the account's quota,
// and the caller (a read budget, adapters/budget) answers from what it read before instead.
const (
	maxAttempts = 8
	maxBackoff  = 2 * time.Second
	// responseTimeout is how long a call waits for the response's headers before the SDK drops
	// the connection and retries on another. Step Functions answers in milliseconds; without it,
	// a connection gone silent (a NAT or firewall that forgot it) held its call, and every call
	// that took it from the pool next, until the caller's own deadline: the soak (test/soak) saw
	// polls answered again 38 to 48 s after such a stall.
	responseTimeout = 10 * time.Second
)

// Config says how to reach Step Functions. Credentials always come from the standard AWS chain
// (environment, shared files, SSO, container or instance roles).
type Config struct {
	// Region is the AWS region of the state machines. Empty: from the standard chain (AWS_REGION,
	// the shared config file).
	Region string
	// Endpoint replaces the Step Functions endpoint URL (a VPC endpoint, LocalStack, moto). Empty:
	// AWS's own endpoint for the region.
	Endpoint string
	// RoleARN, when set, is assumed through STS for every call: for state machines that live in
	// another account.
	RoleARN string
	// HTTPClient replaces the SDK's HTTP client for Step Functions and STS calls, TLS settings
	// included: AWS_CA_BUNDLE applies only to the SDK's own client. Empty: the SDK's default.
	HTTPClient aws.HTTPClient
	// Retried, when set, is told of every retry of an API call, and whether the call was throttled.
	Retried func(throttled bool)
	// Env is where AWS_REGION (then AWS_DEFAULT_REGION), AWS_PROFILE and the static credentials
	// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN are read; nil is the
	// process's environment. The rest of the standard AWS chain reads the process's environment.
	Env driver.Env
	// Events, when its TopicARN is set, is where the engine hears of its executions' status
	// changes (Notices), through SNS and SQS with the same credentials (the role's, with RoleARN)
	// and HTTPClient.
	Events Events
	// Logger is where the event source tells what it makes, deletes and retries. Nil:
	// slog.Default().
	Logger *slog.Logger
}

// conn serves Step Functions executions. It keeps nothing about executions; it remembers only
// each state machine's type, which AWS never changes.
type conn struct {
	client   *sfn.Client
	region   string
	endpoint string
	types    sync.Map // unqualified state machine ARN -> types.StateMachineType
	// history is, by target ARN, whether Check found the definition worth reading the history of
	// running executions for (historyWorth).
	history sync.Map
	// reader makes the calls that read executions, with a retryer that does not retry throttling.
	// It is a client of its own, on the same configuration, rather than a per-call option of
	// client's: an option copies the client's options on every call, which cost a poll about
	// 20 µs.
	reader *sfn.Client
	// identity asks STS, with the credentials the engine's calls are made with (the role's, when
	// it assumes one), which account they are of, for Account; role is the role, for its errors.
	identity *sts.Client
	role     string
	// events is the event source of Notices; nil when the block names none.
	events *statusEvents
}

var _ driver.VisibilityLagger = (*conn)(nil)

// visibilityLag is how long after StartExecution a DescribeExecution (or a listing) may not find
// the execution yet: AWS's reads are eventually consistent, for seconds in practice.
const visibilityLag = 10 * time.Second

// VisibilityLag declares that a read may not find an execution for visibilityLag after its start.
func (e *conn) VisibilityLag() time.Duration { return visibilityLag }

var (
	_ driver.Conn    = (*conn)(nil)
	_ driver.Runner  = (*conn)(nil)
	_ driver.Sweeper = (*conn)(nil)
	_ driver.Aser    = (*conn)(nil)
)

// New configures a Step Functions client. It makes no API call.
func New(ctx context.Context, cfg Config) (driver.Conn, error) {
	e, err := newConn(ctx, cfg)
	if err != nil { // not a typed nil inside the interface
		return nil, err
	}
	return e, nil
}

func newConn(ctx context.Context, cfg Config) (*conn, error) {
	opts := []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer { return newRetryer(cfg.Retried, true) }),
	}
	opts = append(opts, envOptions(cfg.Env)...)
	if cfg.Region != "" {
		opts = append(opts, config.WithRegion(cfg.Region))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("loading the AWS configuration (environment, shared config and credentials files): %w", err)
	}
	// Set after loading: the loader refuses a custom client when AWS_CA_BUNDLE is set, since it can
	// only add the bundle to the SDK's own client.
	if cfg.HTTPClient != nil {
		awsCfg.HTTPClient = cfg.HTTPClient
	} else if c, ok := awsCfg.HTTPClient.(*awshttp.BuildableClient); ok {
		awsCfg.HTTPClient = c.WithTransportOptions(func(t *http.Transport) { t.ResponseHeaderTimeout = responseTimeout })
	}
	if awsCfg.Region == "" {
		return nil, errors.New("no AWS region for Step Functions: set region: in the engine block, or AWS_REGION, or a region in the AWS profile")
	}
	if cfg.RoleARN != "" {
		awsCfg.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(sts.NewFromConfig(awsCfg),
			cfg.RoleARN, func(o *stscreds.AssumeRoleOptions) { o.RoleSessionName = "taskgate" }))
	}
	endpoint := func(o *sfn.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
	}
	reads := newRetryer(cfg.Retried, false)
	e := &conn{client: sfn.NewFromConfig(awsCfg, endpoint), region: awsCfg.Region, endpoint: cfg.Endpoint,
		reader:   sfn.NewFromConfig(awsCfg, endpoint, func(o *sfn.Options) { o.Retryer = reads }),
		identity: sts.NewFromConfig(awsCfg), role: cfg.RoleARN}
	if cfg.Events.TopicARN != "" {
		log := cfg.Logger
		if log == nil {
			log = slog.Default()
		}
		if e.events, err = newEvents(awsCfg, cfg, log); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// newRetryer is the SDK's standard retryer with taskgate's attempts and backoff, telling retried
// of each retry; throttles says whether throttled calls are retried.
func newRetryer(retried func(throttled bool), throttles bool) aws.Retryer {
	r := retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = maxAttempts
		o.MaxBackoff = maxBackoff
		if !throttles {
			o.Retryables = append([]retry.IsErrorRetryable{notThrottled{}}, o.Retryables...)
		}
	})
	if retried != nil {
		return countingRetryer{RetryerV2: r, retried: retried}
	}
	return r
}

// notThrottled keeps a retryer from retrying throttled calls.
type notThrottled struct{}

func (notThrottled) IsErrorRetryable(err error) aws.Ternary {
	if throttle(err) {
		return aws.FalseTernary
	}
	return aws.UnknownTernary
}

// envOptions passes on the AWS variables of env that the SDK would otherwise read from the
// process's environment, so that an explicit environment is honoured too.
func envOptions(env driver.Env) []func(*config.LoadOptions) error {
	var opts []func(*config.LoadOptions) error
	for _, name := range []string{"AWS_REGION", "AWS_DEFAULT_REGION"} {
		if v, _ := env.LookupEnv(name); v != "" {
			opts = append(opts, config.WithRegion(v))
			break
		}
	}
	if v, _ := env.LookupEnv("AWS_PROFILE"); v != "" {
		opts = append(opts, config.WithSharedConfigProfile(v))
	}
	id, _ := env.LookupEnv("AWS_ACCESS_KEY_ID")
	secret, _ := env.LookupEnv("AWS_SECRET_ACCESS_KEY")
	if id != "" && secret != "" {
		session, _ := env.LookupEnv("AWS_SESSION_TOKEN")
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(id, secret, session)))
	}
	return opts
}

// As answers the Step Functions client the conn makes its calls with (**sfn.Client,
// aws-sdk-go-v2's service/sfn), for what the contract does not do (creating state machines,
// reading histories).
func (e *conn) As(target any) bool {
	c, ok := target.(**sfn.Client)
	if ok {
		*c = e.client
	}
	return ok
}

// Close deletes the queue of the event source (Events) and its subscription, if Notices made them;
// the SDK clients hold nothing else that needs closing.
func (e *conn) Close() error {
	if e.events == nil {
		return nil
	}
	return e.events.close()
}

// Check verifies that the state machine (and the version or alias the ARN names) exists. Express
// state machines are SyncOnly: their executions cannot be described later. It also reads from the
// definition whether running executions are worth reading the history of (see Describe).
func (e *conn) Check(ctx context.Context, t driver.Target) (driver.TargetInfo, error) {
	m, err := e.machine(t)
	if err != nil {
		return driver.TargetInfo{}, err
	}
	// DescribeStateMachine accepts version ARNs but not alias ARNs.
	arn, describe := m.String(), m.String()
	if m.alias() {
		if _, err := e.client.DescribeStateMachineAlias(ctx, &sfn.DescribeStateMachineAliasInput{
			StateMachineAliasArn: aws.String(arn),
		}); err != nil {
			return driver.TargetInfo{}, e.targetError(arn, err)
		}
		describe = m.unqualified()
	}
	d, err := e.client.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(describe)})
	if err != nil {
		return driver.TargetInfo{}, e.targetError(arn, err)
	}
	if d.Status == types.StateMachineStatusDeleting {
		return driver.TargetInfo{}, fmt.Errorf("state machine %s is being deleted: point the tool at another state machine", arn)
	}
	e.types.Store(m.unqualified(), d.Type)
	e.history.Store(t.Name, historyWorth(aws.ToString(d.Definition)))
	info := driver.TargetInfo{Retention: closedRetention, ReadCalls: 1}
	if d.Type == types.StateMachineTypeExpress {
		info.SyncOnly = arn + " cannot be described after it starts (an Express state machine)"
	}
	if e.readsHistory(t) {
		info.ReadCalls = 2
	}
	return info, nil
}

// closedRetention is how long Step Functions keeps a closed Standard execution describable (AWS:
// "up to 90 days"); there is no API to read it.
const closedRetention = 90 * 24 * time.Hour

// machine reads the target's state machine and checks that the engine's region can reach it.
func (e *conn) machine(t driver.Target) (machineARN, error) {
	m, err := machineOf(t)
	if err != nil {
		return machineARN{}, err
	}
	if m.region != e.region {
		return machineARN{}, fmt.Errorf("%w: state machine %s is in region %s, but this Step Functions engine uses region %s: "+
			"configure an engine for %s", driver.ErrInvalid, m, m.region, e.region, m.region)
	}
	return m, nil
}

// machineType is the type of the target's state machine, asked once per state machine.
func (e *conn) machineType(ctx context.Context, m machineARN) (types.StateMachineType, error) {
	arn := m.unqualified()
	if v, ok := e.types.Load(arn); ok {
		return v.(types.StateMachineType), nil
	}
	d, err := e.client.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(arn)})
	if err != nil {
		return "", e.targetError(arn, err)
	}
	e.types.Store(arn, d.Type)
	return d.Type, nil
}

func (e *conn) targetError(arn string, err error) error {
	var missing *types.StateMachineDoesNotExist
	var noAlias *types.ResourceNotFound
	var invalid *types.InvalidArn
	if errors.As(err, &missing) || errors.As(err, &noAlias) || errors.As(err, &invalid) {
		endpoint := e.endpoint
		if endpoint == "" {
			endpoint = "AWS's own"
		}
		return fmt.Errorf("state machine %s not found: check the ARN, and that the region (%s), the account "+
			"of the credentials (or of the assumed role) and the endpoint (%s) are those it was created in: %w",
			arn, e.region, endpoint, err)
	}
	return apiError("reading state machine "+arn, err)
}

// apiError wraps an error of one API call. Throttling wraps driver.ErrThrottled; transport
// failures, server errors (after the SDK's retries) and a call that got no answer before its
// deadline wrap driver.ErrUnavailable; a cancelled or expired context stays recognisable with
// errors.Is.
func apiError(what string, err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %s: no answer in time: %w", driver.ErrUnavailable, what, err)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: %w", what, err)
	case throttle(err):
		return fmt.Errorf("%w: %s: %w; retry later", driver.ErrThrottled, what, err)
	case unavailable(err):
		return fmt.Errorf("%w: %s: %w; retry later", driver.ErrUnavailable, what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// throttle reports whether Step Functions refused a call for the caller's rate (ThrottlingException).
func throttle(err error) bool {
	return retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err).Bool()
}

func unavailable(err error) bool {
	var send *smithyhttp.RequestSendError
	var quota ratelimit.QuotaExceededError
	var limit *types.ExecutionLimitExceeded
	var resp *awshttp.ResponseError
	return errors.As(err, &send) || errors.As(err, &quota) || errors.As(err, &limit) ||
		(errors.As(err, &resp) && resp.HTTPStatusCode() >= 500)
}
