package stepfunctions_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
	"github.com/taskgate/taskgate/internal/testenv"
)

// starts records the bodies of the StartExecution requests it passes on.
type starts struct {
	calls
	mu     sync.Mutex
	bodies []string
}

func (s *starts) Do(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.Header.Get("X-Amz-Target"), ".StartExecution") {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		s.mu.Lock()
		s.bodies = append(s.bodies, string(body))
		s.mu.Unlock()
	}
	return s.calls.Do(req)
}

// A start's trace context goes to Step Functions as StartExecution's traceHeader, in X-Ray's
// format. (The test endpoint drops the field, so the request itself is read.)
func TestStartCarriesTheTraceHeader(t *testing.T) {
	ctx := testContext(t)
	hc := &starts{}
	e := newEngine(t, hc)
	echo := stateMachine(t, createExamples(t, sfnClient(t, e), sfnexamples.WaitAndEcho)[sfnexamples.WaitAndEcho])
	for _, trace := range []map[string]string{{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, nil} {
		if _, err := e.Start(ctx, echo, driver.StartRequest{Input: json.RawMessage(`{"seconds":0,"text":"traced"}`), Trace: trace}); err != nil {
			t.Fatalf("Start: %v", err)
		}
	}
	var traced, plain struct {
		TraceHeader *string `json:"traceHeader"`
	}
	if len(hc.bodies) != 2 || json.Unmarshal([]byte(hc.bodies[0]), &traced) != nil || json.Unmarshal([]byte(hc.bodies[1]), &plain) != nil {
		t.Fatalf("StartExecution requests: %q", hc.bodies)
	}
	if want := "Root=1-4bf92f35-77b34da6a3ce929d0e0e4736;Parent=00f067aa0ba902b7;Sampled=1"; traced.TraceHeader == nil || *traced.TraceHeader != want {
		t.Errorf("traceHeader of a traced start: %v, want %q", traced.TraceHeader, want)
	}
	if plain.TraceHeader != nil {
		t.Errorf("a start without trace context sent traceHeader %q", *plain.TraceHeader)
	}
}

// The SDK's retries of throttled calls are told to Config.Retried.
func TestRetriesAreTold(t *testing.T) {
	ctx := testContext(t)
	var mu sync.Mutex
	var told []bool
	hc := &calls{throttleOp: "DescribeStateMachine", throttle: 2}
	e, err := stepfunctions.New(ctx, stepfunctions.Config{Endpoint: testenv.SFNEndpoint(t), HTTPClient: hc, Retried: func(throttled bool) {
		mu.Lock()
		told = append(told, throttled)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	echo := stateMachine(t, createExamples(t, sfnClient(t, e), sfnexamples.WaitAndEcho)[sfnexamples.WaitAndEcho])
	if _, err := e.Check(ctx, echo); err != nil {
		t.Fatalf("Check after two throttled attempts: %v", err)
	}
	if len(told) != 2 || !told[0] || !told[1] {
		t.Errorf("retries told: %v, want two throttled", told)
	}
}
