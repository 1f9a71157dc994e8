package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/worker"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/enginetest"
	"github.com/taskgate/taskgate/adapters/temporal"
	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/internal/testenv"
)

// padded is an answer to AskAndEcho's question whose content is about size bytes.
func padded(size int) driver.Answer {
	content, _ := json.Marshal(map[string]any{"confirm": true, "pad": strings.Repeat("x", size-len(`{"confirm":true,"pad":""}`))})
	return driver.Answer{Action: driver.ActionAccept, Content: content}
}

// The largest answer Temporal takes is refused at once, before any engine call (an engine whose
// frontend is cut refuses it the same way); the workflow waits on, and a large answer under the
// limit completes it. Above 2 MiB, an answer the workflow takes makes its worker's report too
// large for gRPC on every retry, and the Update never completes.
func TestAnswerOverTheLimitIsRefusedAtOnce(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := testContext(t)
	e, tg := v.engine, v.target(temporalexamples.AskAndEchoName)
	r := start(ctx, t, e, tg, map[string]any{"message": "Ship it?"}, "")
	enginetest.AwaitStatus(ctx, t, e, tg, r, "input_required", inputRequired)

	addr, cut, _ := enginetest.Switch(t, testenv.TemporalAddress(t))
	offline, err := temporal.New(ctx, temporal.Config{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer offline.Close()
	cut()
	const want = `invalid request: the answer is 3.0 MiB; Temporal takes answers of at most 1.9 MiB (2031616 bytes)`
	for name, eng := range map[string]driver.Conn{"the engine": e, "an engine whose frontend is cut": offline} {
		began := time.Now()
		err := eng.Answer(ctx, tg, r, "confirm", padded(3<<20))
		if took := time.Since(began); !errors.Is(err, driver.ErrInvalid) || !strings.HasSuffix(err.Error(), want) || took > 5*time.Second {
			t.Errorf("%s: a 3 MiB answer: %v after %v; want it within 5 s (no engine call): ...%s", name, err, took, want)
		}
	}
	if st, err := e.Describe(ctx, tg, r); err != nil || !inputRequired(st) {
		t.Fatalf("after the refused answer: %+v, %v; want the question still open", st, err)
	}
	large := padded(2<<20 - 64<<10 - 200)
	if err := e.Answer(ctx, tg, r, "confirm", large); err != nil {
		t.Fatalf("an answer just under the limit: %v", err)
	}
	out, err := awaitEnd(ctx, e, tg, r)
	if err != nil || out.State != driver.Succeeded || string(out.Output) != string(large.Content) {
		t.Errorf("Wait after the answer under the limit: %v, %v (%d bytes of output); want succeeded with the answer", out.State, err, len(out.Output))
	}
}

// An answer the workflow cannot take (its worker is gone) ends the wait within answerTaken (20 s)
// even when the caller set no deadline: retryable, and saying what happened.
func TestAnswerWaitsForTheWorkflowAtMost20s(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	e, err := temporal.New(ctx, temporal.Config{Address: testenv.TemporalAddress(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	queue := "taskgate-test-gone-" + uuid.NewString()
	w := worker.New(sdkClient(t, e), queue, worker.Options{})
	temporalexamples.Register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	tg := temporal.Workflow(temporalexamples.AskAndEchoName, queue, time.Minute)
	r := start(ctx, t, e, tg, map[string]any{"message": "Ship it?"}, "")
	enginetest.AwaitStatus(ctx, t, e, tg, r, "input_required", inputRequired)
	w.Stop()

	began := time.Now()
	answered := make(chan error, 1)
	go func() {
		answered <- e.Answer(context.Background(), tg, r, "confirm", driver.Answer{Action: driver.ActionAccept, Content: json.RawMessage(`{"confirm":true}`)})
	}()
	select {
	case err = <-answered:
	case <-time.After(40 * time.Second):
		t.Fatal("an answer no worker takes, with no deadline: no return within 40 s")
	}
	took := time.Since(began)
	if !errors.Is(err, driver.ErrUnavailable) || !strings.Contains(err.Error(), "the workflow did not take the answer in time") || took < 15*time.Second || took > 25*time.Second {
		t.Errorf("an answer no worker takes: %v after %v; want ErrUnavailable after about 20 s, saying the workflow did not take it", err, took)
	}
	_ = e.Cancel(ctx, tg, r, "test over")
}
