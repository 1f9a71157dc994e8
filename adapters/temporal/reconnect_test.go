package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/enginetest"
	"github.com/taskgate/taskgate/adapters/temporal"
	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/test/faults"
)

// prober dials an engine at addr and tells whether the frontend answers: a Describe of a
// workflow it does not have answers not found.
func prober(t *testing.T, ctx context.Context, addr string) func() (bool, error) {
	t.Helper()
	e, err := temporal.New(ctx, temporal.Config{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	target := temporal.Workflow(temporalexamples.WaitAndEchoName, temporalexamples.TaskQueue, 0)
	missing := driver.Ref{ID: "taskgate/WaitAndEcho/" + driver.CallerTag("") + "/" + uuid.NewString() + "/" + uuid.NewString()}
	return func() (bool, error) {
		_, err := e.Describe(ctx, target, missing)
		return errors.Is(err, driver.ErrNotFound), err
	}
}

// TestAnswersSoonAfterTheServerReturns: after an outage long enough for a reconnect backoff to
// grow, the engine answers within 2 s of the server's return. With the SDK's own backoff (200 ms
// growing by 1.6 up to 10 s), the attempt after a 16 s outage comes about 6 s after the return,
// and every call until then fails with the old error; the soak (test/soak) found it after its
// Temporal restart.
func TestAnswersSoonAfterTheServerReturns(t *testing.T) {
	addr, cut, restore := enginetest.Switch(t, testenv.TemporalAddress(t))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	answers := prober(t, ctx, addr)
	if ok, err := answers(); !ok {
		t.Fatalf("Describe of a missing workflow before the outage: %v, want not found", err)
	}

	cut()
	for end := time.Now().Add(16 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if ok, err := answers(); ok || !errors.Is(err, driver.ErrUnavailable) {
			t.Fatalf("Describe while the server is away: %v, want ErrUnavailable", err)
		}
	}
	restore()
	back := time.Now()
	for {
		ok, err := answers()
		if ok {
			break
		}
		if time.Since(back) > 30*time.Second {
			t.Fatalf("no answer 30 s after the server's return: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if d := time.Since(back); d > 2*time.Second {
		t.Errorf("the engine answered %v after the server's return, want within 2 s", d.Round(time.Millisecond))
	} else {
		t.Logf("answered %v after the server's return", d.Round(time.Millisecond))
	}
}

// TestFindsASilencedConnectionDead: a connection that goes silent for good (a NAT or firewall
// that forgot it, faults.Proxy.Stall) is found dead by the keepalive and dialled again within
// 20 s, where the SDK's keepalive (a ping after 30 s, 15 s to answer) left every call hanging for
// 45 s. The soak found it.
func TestFindsASilencedConnectionDead(t *testing.T) {
	p, err := faults.Listen(testenv.TemporalAddress(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	answers := prober(t, ctx, p.Addr())
	if ok, err := answers(); !ok {
		t.Fatalf("Describe of a missing workflow before the stall: %v, want not found", err)
	}
	if n := p.Stall(); n != 1 {
		t.Fatalf("the engine had %d connections to the frontend, want 1", n)
	}
	stalled := time.Now()
	for {
		ok, err := answers()
		if ok {
			break
		}
		if !errors.Is(err, driver.ErrUnavailable) {
			t.Fatalf("Describe over a silenced connection: %v, want ErrUnavailable", err)
		}
	}
	if d := time.Since(stalled); d > 25*time.Second {
		t.Errorf("the engine answered %v after its connection went silent, want within about 20 s", d.Round(time.Millisecond))
	} else {
		t.Logf("answered %v after the connection went silent", d.Round(time.Millisecond))
	}
}

// TestNoAnswerInTimeIsRetryable: a call the frontend does not answer before the caller's deadline
// (a blackhole between them) is ErrUnavailable, which clients retry, and still a deadline error.
// It was neither: taskgate's shared reads, which the soak (test/soak) found unbounded, get a
// deadline, and their callers must not see its end as a lasting failure.
func TestNoAnswerInTimeIsRetryable(t *testing.T) {
	p, err := faults.Listen(testenv.TemporalAddress(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	e, err := temporal.New(t.Context(), temporal.Config{Address: p.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	p.Set(faults.Faults{Blackhole: true})
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	_, err = e.Describe(ctx, temporal.Workflow(temporalexamples.WaitAndEchoName, temporalexamples.TaskQueue, 0),
		driver.Ref{ID: "taskgate/WaitAndEcho/" + driver.CallerTag("") + "/" + uuid.NewString() + "/" + uuid.NewString()})
	if !errors.Is(err, driver.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Describe unanswered before its deadline: %v, want ErrUnavailable and context.DeadlineExceeded", err)
	}
}

// TestWaitGoesOnThroughAnOutage: Wait outlives the frontend's going away and coming back, as the
// execution does, and returns its outcome. It returned the first transient failure, so a tool call
// that waits for its result (the wait mode) failed, and its client, retrying, started the
// workflow a second time: the soak (test/soak) counted those extra executions.
func TestWaitGoesOnThroughAnOutage(t *testing.T) {
	v := newEnv(t)
	addr, cut, restore := enginetest.Switch(t, testenv.TemporalAddress(t))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	e, err := temporal.New(ctx, temporal.Config{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	echo := v.target(temporalexamples.WaitAndEchoName)
	text := "through the outage " + uuid.NewString()
	r, err := e.Start(ctx, echo, driver.StartRequest{Input: json.RawMessage(`{"seconds": 3, "text": "` + text + `"}`)})
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	var out driver.Outcome
	go func() {
		var err error
		out, err = awaitEnd(ctx, e, echo, r)
		waited <- err
	}()
	time.Sleep(500 * time.Millisecond)
	cut()
	time.Sleep(4 * time.Second) // the execution ends meanwhile
	restore()
	if err := <-waited; err != nil {
		t.Fatalf("Wait across an outage of the frontend: %v", err)
	}
	if out.State != driver.Succeeded || !strings.Contains(string(out.Output), text) {
		t.Errorf("Wait across an outage: %+v, want the echo of %q", out, text)
	}
}
