package restate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/taskgate/taskgate/adapters/driver"
)

// The types of services and handlers, as the admin API names them.
const (
	objectType      = "VirtualObject"
	workflowType    = "Workflow"
	workflowHandler = "Workflow"
	sharedHandler   = "Shared"
)

// service is what the admin API says of a registered service.
type service struct {
	Name          string        `json:"name"`
	Type          string        `json:"ty"`
	Documentation string        `json:"documentation"`
	Handlers      []handlerMeta `json:"handlers"`
	Idempotency   string        `json:"idempotency_retention"`
	WorkflowKept  string        `json:"workflow_completion_retention"`
}

// handlerMeta is what the admin API says of a handler.
type handlerMeta struct {
	Name          string          `json:"name"`
	Type          string          `json:"ty"`
	Documentation string          `json:"documentation"`
	Input         json.RawMessage `json:"input_json_schema"`
	Output        json.RawMessage `json:"output_json_schema"`
}

// keyed reports whether the service's invocations have a key: workflows and virtual objects.
func (s service) keyed() bool { return s.Type == workflowType || s.Type == objectType }

// keyColumn is the column of sys_invocation that holds its invocations' task keys: a workflow's
// or object's key (also their partition key: a point read), else the idempotency key.
func (s service) keyColumn() string {
	if s.keyed() {
		return "target_service_key"
	}
	return "idempotency_key"
}

// serves says whether a task can invoke the handler: any handler of a service, a workflow's run
// handler, a virtual object's exclusive handlers. Each task gets a key of its own, so a shared
// handler would only ever see an empty object, and a workflow's other handlers no workflow.
func (s service) serves(name string) error {
	i := slices.IndexFunc(s.Handlers, func(h handlerMeta) bool { return h.Name == name })
	if i < 0 {
		names := make([]string, len(s.Handlers))
		for j, h := range s.Handlers {
			names[j] = h.Name
		}
		return fmt.Errorf("%s %s has no handler %q; it has %s", strings.ToLower(typeWords(s.Type)), s.Name, name, strings.Join(names, ", "))
	}
	switch h := s.Handlers[i]; {
	case s.Type == workflowType && h.Type != workflowHandler:
		return fmt.Errorf("%s is a shared handler of workflow %s: each task runs a workflow of its own, so invoke its run handler (of type Workflow)", name, s.Name)
	case s.Type == objectType && h.Type == sharedHandler:
		return fmt.Errorf("%s is a shared handler of virtual object %s: each task gets an object of its own, so it would only ever see an empty one; invoke an exclusive handler", name, s.Name)
	}
	return nil
}

// typeWords names a service type in messages.
func typeWords(t string) string {
	switch t {
	case objectType:
		return "Virtual object"
	case workflowType:
		return "Workflow"
	}
	return "Service"
}

// retention is how long Restate keeps a completed task's invocation readable.
func (s service) retention() time.Duration {
	if s.Type == workflowType {
		return parseRetention(s.WorkflowKept)
	}
	return parseRetention(s.Idempotency)
}

// service reads a service's metadata, once.
func (e *conn) service(ctx context.Context, what, name string) (service, error) {
	if v, ok := e.services.Load(name); ok {
		return v.(service), nil
	}
	s, err := e.describeService(ctx, what, name)
	if err != nil {
		return service{}, err
	}
	e.services.Store(name, s)
	return s, nil
}

// describeService asks the admin API for a service's metadata.
func (e *conn) describeService(ctx context.Context, what, name string) (service, error) {
	status, body, err := e.call(ctx, what, http.MethodGet, e.admin+"/services/"+url.PathEscape(name), nil, nil)
	if err != nil {
		return service{}, err
	}
	switch status {
	case http.StatusOK:
	case http.StatusNotFound:
		return service{}, fmt.Errorf("restate: %s: Restate at %s has no service %q: register the deployment that serves it (restate deployments register URL)", what, e.admin, name)
	default:
		return service{}, refused(what, status, body)
	}
	var s service
	if err := json.Unmarshal(body, &s); err != nil || s.Name != name {
		return service{}, fmt.Errorf("restate: %s: the admin API's description of service %s is not one: %.200s", what, name, body)
	}
	return s, nil
}

// Check verifies that the target's service is registered and that its handler can back a task.
// The service's type is read again: a deployment registered since may have changed it.
func (e *conn) Check(ctx context.Context, t driver.Target) (driver.TargetInfo, error) {
	h, err := handlerOf(t)
	if err != nil {
		return driver.TargetInfo{}, err
	}
	what := "check " + t.Name
	s, err := e.describeService(ctx, what, h.service)
	if err != nil {
		return driver.TargetInfo{}, err
	}
	if err := s.serves(h.handler); err != nil {
		return driver.TargetInfo{}, fmt.Errorf("restate: %s: %w", what, err)
	}
	e.services.Store(h.service, s)
	return driver.TargetInfo{Retention: s.retention()}, nil
}

// retentionPart is one number and unit of a duration as Restate writes it, like "1d" or
// "1h 30m" (the jiff crate's friendly format).
var retentionPart = regexp.MustCompile(`^\s*(\d+)\s*([a-zµ]+)\s*`)

var retentionUnits = map[string]time.Duration{
	"w": 7 * 24 * time.Hour, "week": 7 * 24 * time.Hour, "weeks": 7 * 24 * time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"ms": time.Millisecond, "msec": time.Millisecond, "millisecond": time.Millisecond, "milliseconds": time.Millisecond,
}

// parseRetention reads a retention as the admin API writes it; zero when it cannot (unknown).
func parseRetention(s string) time.Duration {
	var d time.Duration
	for rest := s; strings.TrimSpace(rest) != ""; {
		m := retentionPart.FindStringSubmatch(rest)
		if m == nil {
			return 0
		}
		n, err := strconv.Atoi(m[1])
		unit, ok := retentionUnits[m[2]]
		if err != nil || !ok {
			return 0
		}
		d += time.Duration(n) * unit
		rest = rest[len(m[0]):]
	}
	return d
}

// Register registers (or registers again, replacing) the deployment at uri with ep's admin API, so
// that Restate discovers its services and sends their invocations there: what `restate
// deployments register URI --force` does. A Conn that read a service's metadata before keeps what
// it read: register before serving a deployment whose handlers changed.
func Register(ctx context.Context, ep Endpoints, uri string) error {
	hc := ep.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	e := &conn{admin: trimSlash(ep.Admin), token: ep.Token, hc: hc}
	what := "register the deployment " + uri
	body, err := json.Marshal(map[string]any{"uri": uri, "force": true})
	if err != nil {
		return err
	}
	status, resp, err := e.call(ctx, what, http.MethodPost, e.admin+"/deployments", nil, body)
	if err != nil {
		return err
	}
	if status != http.StatusOK && status != http.StatusCreated {
		return refused(what, status, resp)
	}
	return nil
}
