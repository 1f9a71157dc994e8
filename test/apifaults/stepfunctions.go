package apifaults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"
)

// StepFunctions is an HTTP proxy in front of a Step Functions endpoint (the AWS JSON 1.0 protocol:
// every call a POST whose X-Amz-Target header names the operation).
type StepFunctions struct {
	srv       *http.Server
	url       string
	throttle  throttler
	limit     limiter
	calls     counts
	throttled counts
	limited   counts

	mu      sync.Mutex
	lose    map[string]int // operation -> answers still to lose
	loseAt  time.Duration  // how long after the endpoint answered they are lost
	hideFor time.Duration
	started map[string]time.Time // execution ARN -> when the proxy saw StartExecution answer it
}

// NewStepFunctions serves a proxy to the Step Functions endpoint at target (like
// http://127.0.0.1:5055) on a loopback port of its own, until Close.
func NewStepFunctions(target string) (*StepFunctions, error) {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("apifaults: %q is not a Step Functions endpoint URL", target)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &StepFunctions{url: "http://" + ln.Addr().String(), started: map[string]time.Time{}, lose: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = p.record
	p.srv = &http.Server{Handler: p.handler(rp), ReadHeaderTimeout: 10 * time.Second}
	go p.srv.Serve(ln)
	return p, nil
}

// URL returns the proxy's endpoint, for the SDK's BaseEndpoint.
func (p *StepFunctions) URL() string { return p.url }

// Close stops the proxy.
func (p *StepFunctions) Close() error { return p.srv.Close() }

// Throttle answers fraction (0 to 1) of the calls of ops (all operations when none are named)
// with ThrottlingException, as Step Functions answers a caller over its quota, from now on.
func (p *StepFunctions) Throttle(fraction float64, ops ...string) { p.throttle.set(fraction, ops) }

// Limit enforces a quota on the calls of ops (all operations when none are named), as Step
// Functions enforces its per-account quotas: a token bucket of burst calls refilled at perSecond,
// which answers a call that finds it empty with ThrottlingException (like ListExecutions' quota of
// 100 refilled at 2 a second in the smaller regions: Limit(2, 100, "ListExecutions")), from now
// on, the bucket full. perSecond 0 lifts it. It applies before Throttle's fraction.
func (p *StepFunctions) Limit(perSecond float64, burst int, ops ...string) {
	p.limit.set(perSecond, burst, ops)
}

// Limited counts the calls of op the proxy answered with ThrottlingException for Limit's quota.
func (p *StepFunctions) Limited(op string) int64 { return p.limited.get(op) }

// HideFor makes DescribeExecution and GetExecutionHistory answer ExecutionDoesNotExist for
// executions that the proxy saw StartExecution start less than d ago, as an eventually consistent
// read may right after a start; 0 hides nothing.
func (p *StepFunctions) HideFor(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hideFor = d
}

// LoseAnswers makes the next n calls of op reach the endpoint and take effect there, and answers
// each, after, with a 500 instead of the endpoint's answer, as when an answer is lost on its way
// back (a connection cut, a client's timeout): the SDK retries a call that was made.
func (p *StepFunctions) LoseAnswers(op string, n int, after time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lose[op], p.loseAt = n, after
}

// losing reports whether the answer of this call of op is to be lost, and counts it.
func (p *StepFunctions) losing(op string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lose[op] == 0 {
		return false
	}
	p.lose[op]--
	return true
}

// Calls counts the calls of op that reached the proxy, throttled (and limited) ones and hidden
// ones included.
func (p *StepFunctions) Calls(op string) int64 { return p.calls.get(op) }

// AllCalls counts the calls that reached the proxy, by operation.
func (p *StepFunctions) AllCalls() map[string]int64 { return p.calls.all() }

// Throttled counts the calls of op the proxy answered with ThrottlingException.
func (p *StepFunctions) Throttled(op string) int64 { return p.throttled.get(op) }

func (p *StepFunctions) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AWSStepFunctions.")
		p.calls.add(op)
		if p.limit.refuse(op) {
			p.limited.add(op)
			awsError(w, "ThrottlingException", "com.amazon.coral.availability#ThrottlingException", "Rate exceeded")
			return
		}
		if p.throttle.throttle(op) {
			p.throttled.add(op)
			awsError(w, "ThrottlingException", "com.amazon.coral.availability#ThrottlingException", "Rate exceeded")
			return
		}
		if op == "DescribeExecution" || op == "GetExecutionHistory" {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			var in struct{ ExecutionArn string }
			if json.Unmarshal(body, &in) == nil && p.hidden(in.ExecutionArn) {
				awsError(w, "ExecutionDoesNotExist", "com.amazonaws.swf.service.v2.model#ExecutionDoesNotExist",
					"Execution Does Not Exist: '"+in.ExecutionArn+"'")
				return
			}
		}
		if p.losing(op) {
			next.ServeHTTP(httptest.NewRecorder(), r)
			p.mu.Lock()
			after := p.loseAt
			p.mu.Unlock()
			time.Sleep(after)
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"__type":"com.amazonaws.swf.service.v2.model#InternalFailure","message":"the answer was lost (apifaults)"}`))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// record notes when each execution that StartExecution answered was started, while executions
// are hidden.
func (p *StepFunctions) record(resp *http.Response) error {
	p.mu.Lock()
	hiding := p.hideFor > 0
	p.mu.Unlock()
	if !hiding || resp.Request.Header.Get("X-Amz-Target") != "AWSStepFunctions.StartExecution" || resp.StatusCode != http.StatusOK {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var out struct{ ExecutionArn string }
	if json.Unmarshal(body, &out) == nil && out.ExecutionArn != "" {
		p.mu.Lock()
		p.started[out.ExecutionArn] = time.Now()
		p.mu.Unlock()
	}
	return nil
}

func (p *StepFunctions) hidden(arn string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	at, ok := p.started[arn]
	return ok && time.Since(at) < p.hideFor
}

// awsError answers as an AWS JSON 1.0 service answers an error of the caller.
func awsError(w http.ResponseWriter, code, typ, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-Errortype", code)
	w.Header().Set("X-Amzn-Requestid", fmt.Sprintf("apifaults-%d", time.Now().UnixNano()))
	w.WriteHeader(http.StatusBadRequest)
	b, _ := json.Marshal(map[string]string{"__type": typ, "message": msg})
	w.Write(b)
}
