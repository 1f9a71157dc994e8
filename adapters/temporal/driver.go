package temporal

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/contrib/envconfig"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
)

func init() { adapters.Register("temporal", Driver{}) }

// Driver is the "temporal" engine kind of mapping files:
//
//	engines:
//	  prod:
//	    temporal: {address: my-ns.a1b2c.tmprl.cloud:7233, namespace: my-ns.a1b2c, apiKeyEnv: TEMPORAL_API_KEY}
//	tools:
//	  - name: migrate_repo
//	    engine: prod
//	    workflow: {type: MigrateRepository, taskQueue: migrations, executionTimeout: 1h}
//
// What an engine block leaves out comes from the Temporal CLI's environment variables and
// profiles (go.temporal.io/sdk/contrib/envconfig). Its native task ids are "WORKFLOW-ID/RUN-ID".
type Driver struct{}

//go:embed schema.json
var schema []byte

const addressHint = "the Temporal frontend as host:port, like 127.0.0.1:7233"

// Info describes the engine block and the workflow key.
func (Driver) Info() driver.DriverInfo {
	return driver.DriverInfo{
		Title:         "Temporal",
		TargetKey:     "workflow",
		Schema:        schema,
		EngineExample: "temporal: {address: 127.0.0.1:7233}",
		TargetExample: "workflow: {type: ..., taskQueue: ...}",
		Budget:        DefaultBudget,
	}
}

// DefaultBudget is a tenth of a Temporal Cloud namespace's default request rate (2,000 requests
// per second; a self-hosted frontend allows 2,400 per namespace and frontend by default): the
// namespace's workers poll, complete tasks and heartbeat under the same limit, and they are its
// real work. A poll of a running workflow is one DescribeWorkflowExecution.
var DefaultBudget = driver.Budget{ReadsPerSecond: 200, Burst: 400}

// engineBlock is a decoded engine block: what it sets over the environment's profile.
type engineBlock struct {
	address, namespace string
	// tls replaces the profile's TLS settings when the block has a tls key.
	tls *envconfig.ClientConfigTLS
	// apiKeyEnv names the variable that holds the API key.
	apiKeyEnv string
}

// DecodeEngine reads address, namespace, tls and apiKeyEnv, all optional.
func (Driver) DecodeEngine(b driver.Block) driver.EngineConfig {
	c := &engineBlock{}
	if addr, ok := b.String("address"); ok && addr != "" {
		if validHostPort(addr) {
			c.address = addr
		} else {
			b.Errorf("address", addressHint, "%q is not host:port", addr)
		}
	}
	c.namespace, _ = b.String("namespace")
	if tb, ok := b.Block("tls", "write tls: {} for TLS with the system's root certificates"); ok {
		c.tls = &envconfig.ClientConfigTLS{}
		c.tls.ServerCACertPath, _ = tb.File("caFile")
		c.tls.ClientCertPath, _ = tb.File("certFile")
		c.tls.ClientKeyPath, _ = tb.File("keyFile")
		c.tls.ServerName, _ = tb.String("serverName")
		if (c.tls.ClientCertPath == "") != (c.tls.ClientKeyPath == "") {
			tb.Errorf("", "set both for mutual TLS, or neither", "certFile and keyFile go together")
		}
	}
	c.apiKeyEnv, _ = b.EnvName("apiKeyEnv", "like TEMPORAL_API_KEY; the key itself never goes in a mapping file")
	return c
}

func validHostPort(s string) bool {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" || strings.ContainsAny(host, " /") {
		return false
	}
	p, err := strconv.Atoi(port)
	return err == nil && p > 0 && p < 65536
}

// Open makes a client of the frontend: the Temporal CLI's profile and environment variables in
// opts.Env (TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE, TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
// TEMPORAL_API_KEY, TEMPORAL_TLS_*...), with what the block sets over them. It makes no call, so
// that taskgate can start before its engine: Check finds a frontend that does not answer, and the
// client connects once it does.
func (c *engineBlock) Open(ctx context.Context, opts driver.OpenOptions) (driver.Conn, error) {
	prof, err := envconfig.LoadClientConfigProfile(envconfig.LoadClientConfigProfileOptions{EnvLookup: opts.Env})
	if err != nil {
		return nil, fmt.Errorf("temporal: reading the Temporal CLI's configuration (TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE and TEMPORAL_* variables): %w", err)
	}
	if c.address != "" {
		prof.Address = c.address
	}
	if c.namespace != "" {
		prof.Namespace = c.namespace
	}
	if c.tls != nil {
		prof.TLS = c.tls
	}
	if c.apiKeyEnv != "" {
		key, _ := opts.Env.LookupEnv(c.apiKeyEnv)
		if key == "" {
			return nil, fmt.Errorf("temporal: apiKeyEnv names %s, which is not set: export the Temporal API key in it", c.apiKeyEnv)
		}
		prof.APIKey = key
	}
	copts, err := prof.ToClientOptions(envconfig.ToClientOptionsRequest{})
	if err != nil {
		return nil, fmt.Errorf("temporal: %w: check the tls files of the engine block, or the TEMPORAL_TLS_* variables", err)
	}
	e, err := dial(ctx, copts, false)
	if err != nil { // not a typed nil inside the interface
		return nil, err
	}
	return e, nil
}

// DecodeTarget reads workflow: {type, taskQueue, executionTimeout}.
func (Driver) DecodeTarget(tool driver.Block) driver.Target {
	wf, ok := tool.Block("workflow", "write workflow: {type: ..., taskQueue: ...}")
	if !ok {
		return driver.Target{}
	}
	typ, _ := wf.Required("type", "the workflow type to start, as its workers register it")
	queue, _ := wf.Required("taskQueue", "the task queue that the workflow's workers poll")
	timeout, _ := wf.Duration("executionTimeout")
	return Workflow(typ, queue, timeout)
}

// workflow is the Spec of a Temporal target.
type workflow struct {
	typ, queue string
	// timeout is the workflow execution timeout; zero leaves the server's default.
	timeout time.Duration
}

// Workflow returns the target that starts workflows of type typ on task queue queue, each bounded
// by its workflow execution timeout when timeout is positive: what DecodeTarget reads from
// workflow: {type, taskQueue, executionTimeout}. Its Name is the workflow type.
func Workflow(typ, queue string, timeout time.Duration) driver.Target {
	return driver.Target{Name: typ, Spec: workflow{typ: typ, queue: queue, timeout: timeout}}
}

// A Ref's ID is "WORKFLOW-ID/RUN-ID", the run id being the one of the chain's first run, as the
// Temporal UI and CLI name a run. Only KeyRef leaves the run id empty ("WORKFLOW-ID/"): the
// workflow id's latest chain.

// ref is the Ref of the run chain of workflow id whose first run is run.
func ref(id, run string) driver.Ref { return driver.Ref{ID: id + "/" + run} }

// WorkflowOf reads a Ref of a Temporal engine back into the workflow id and the run id of its
// chain's first run (empty for a KeyRef: the workflow id's latest chain), for callers that go on
// with Temporal's own client. ok is false for a Ref that no Temporal engine gives.
func WorkflowOf(r driver.Ref) (workflowID, runID string, ok bool) {
	i := strings.LastIndexByte(r.ID, '/')
	if i <= 0 || (i+1 < len(r.ID) && !isUUID(r.ID[i+1:])) {
		return "", "", false
	}
	return r.ID[:i], r.ID[i+1:], true
}

// FormatRef writes the Ref's ID: "WORKFLOW-ID/RUN-ID".
func (Driver) FormatRef(r driver.Ref) string { return r.ID }

// ParseRef accepts "WORKFLOW-ID/RUN-ID" with a run id: workflow ids may hold slashes, run ids are
// UUIDs.
func (Driver) ParseRef(id string) (driver.Ref, error) {
	if _, run, ok := WorkflowOf(driver.Ref{ID: id}); !ok || run == "" {
		return driver.Ref{}, errors.New("temporal: not a workflow id and run id: want WORKFLOW-ID/RUN-ID, the run id a UUID")
	}
	return driver.Ref{ID: id}, nil
}

// isUUID accepts only the canonical lowercase form, the one Temporal and uuid.NewString produce.
func isUUID(s string) bool {
	u, err := uuid.Parse(s)
	return err == nil && u.String() == s
}
