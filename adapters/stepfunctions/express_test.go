package stepfunctions

import (
	"errors"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/internal/testenv"
)

// hosts records the host every request was sent to.
type hosts struct {
	mu   sync.Mutex
	seen []string
}

func (h *hosts) Do(req *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.seen = append(h.seen, req.URL.Host)
	h.mu.Unlock()
	return http.DefaultClient.Do(req)
}

// The test endpoint has no Express state machines and answers StartSyncExecution with HTTP 500.
// What can be checked is that the call reaches the configured endpoint: the SDK would otherwise
// send it to "sync-" + host, which does not resolve.
func TestRunSyncUsesConfiguredEndpoint(t *testing.T) {
	t.Parallel()
	endpoint := testenv.SFNEndpoint(t)
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	h := &hosts{}
	e, err := newConn(t.Context(), Config{Endpoint: endpoint, HTTPClient: h})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	m, err := parseMachineARN("arn:aws:states:" + e.region + ":123456789012:stateMachine:taskgate-express")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = e.runSync(t.Context(), m, "{}", nil)
	if !errors.Is(err, driver.ErrUnavailable) {
		t.Errorf("runSync against an endpoint without StartSyncExecution: error %v, want ErrUnavailable", err)
	}
	if len(h.seen) == 0 {
		t.Fatal("runSync sent no request")
	}
	for _, host := range h.seen {
		if host != u.Host {
			t.Errorf("StartSyncExecution went to host %q, want the configured %q", host, u.Host)
		}
	}
}

// Express state machines are refused where they cannot work, before any API call: the type is
// known from an earlier Check, and the endpoint is a closed port.
func TestExpressRefusals(t *testing.T) {
	e, err := newConn(t.Context(), Config{Region: "us-east-1", Endpoint: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	target, _ := StateMachine("arn:aws:states:us-east-1:123456789012:stateMachine:quick:PROD")
	e.types.Store("arn:aws:states:us-east-1:123456789012:stateMachine:quick", types.StateMachineTypeExpress)

	_, err = e.Start(t.Context(), target, driver.StartRequest{Input: []byte(`{}`)})
	want := "state machine " + target.Name + " is an Express state machine, whose executions cannot be described " +
		"later: serve it through Run (a synchronous tool)"
	if err == nil || err.Error() != want {
		t.Errorf("Start of an Express state machine: error %v\nwant %s", err, want)
	}
	_, _, err = e.Run(t.Context(), target, driver.StartRequest{Input: []byte(`{}`), Key: "k"})
	want = "invalid request: " + target.Name + " is an Express state machine, and Step Functions does not " +
		"deduplicate Express executions: call it without an idempotency key"
	if !errors.Is(err, driver.ErrInvalid) || err.Error() != want {
		t.Errorf("Run of an Express state machine with a key: error %v\nwant %s", err, want)
	}
}
