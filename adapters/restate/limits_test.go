package restate_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	sdk "github.com/restatedev/sdk-go"
	"github.com/restatedev/sdk-go/encoding"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/enginetest"
	"github.com/taskgate/taskgate/adapters/restate"
	restateexamples "github.com/taskgate/taskgate/examples/restate"
	"github.com/taskgate/taskgate/internal/testenv"
)

// An answer over Restate's limit (whose ingress cuts the connection of a larger body, which read
// as the engine being unreachable) is refused with no call, even by an engine that cannot reach
// Restate; the question stays open and a normal answer completes the invocation.
func TestAnswerOverTheLimit(t *testing.T) {
	ctx := testContext(t)
	e, err := restate.New(restate.Config{Ingress: testenv.RestateIngress(t), Admin: testenv.RestateAdmin(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	offline, err := restate.New(restate.Config{Ingress: "http://127.0.0.1:1", Admin: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	defer offline.Close()
	tg := example(restateexamples.AskAndEcho)
	r, err := e.Start(ctx, tg, driver.StartRequest{Input: json.RawMessage(`{"message":"Ship it?"}`)})
	if err != nil {
		t.Fatal(err)
	}
	enginetest.AwaitStatus(ctx, t, e, tg, r, "input_required", func(st driver.Status) bool { return st.State == driver.InputRequired })

	over, _ := json.Marshal(map[string]any{"confirm": true, "pad": strings.Repeat("x", 32<<20)})
	const want = "invalid request: the answer is 32.0 MiB; Restate takes answers of at most 31.9 MiB (33488896 bytes)"
	for name, eng := range map[string]driver.Conn{"the engine": e, "an engine that cannot reach Restate": offline} {
		began := time.Now()
		err := eng.Answer(ctx, tg, r, "confirm", driver.Answer{Action: driver.ActionAccept, Content: over})
		if took := time.Since(began); !errors.Is(err, driver.ErrInvalid) || !strings.HasSuffix(err.Error(), want) || took > 5*time.Second {
			t.Errorf("%s: a 32 MiB answer: %v after %v; want it within 5 s (no call): ...%s", name, err, took, want)
		}
	}
	if err := e.Answer(ctx, tg, r, "confirm", driver.Answer{Action: driver.ActionAccept, Content: json.RawMessage(`{"confirm":true}`)}); err != nil {
		t.Fatalf("a normal answer after the refused one: %v", err)
	}
	if out, err := awaitEnd(ctx, e, tg, r); err != nil || out.State != driver.Succeeded || string(out.Output) != `{"confirm":true}` {
		t.Errorf("Wait: %+v, %v; want succeeded with the answer", out, err)
	}
}

// A handler that succeeds with an output that is not JSON ends Failed, saying so.
func TestAnOutputThatIsNotJSONIsAFailure(t *testing.T) {
	ctx := testContext(t)
	e, err := restate.New(restate.Config{Ingress: testenv.RestateIngress(t), Admin: testenv.RestateAdmin(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	service := "NotJSON" + randomHex(4)
	deploy(t, e, false, sdk.NewService(service).Handler("run", sdk.NewServiceHandler(
		func(sdk.Context, struct{}) ([]byte, error) { return []byte(`{"confirm":NaN}`), nil },
		sdk.WithOutputCodec(encoding.BinaryCodec))))
	tg := restate.Handler(service, "run", restate.Cancel)
	r, err := e.Start(ctx, tg, driver.StartRequest{Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := awaitEnd(ctx, e, tg, r)
	want := driver.Outcome{State: driver.Failed, Native: "succeeded", Error: driver.InvalidOutputError,
		Cause: "the execution succeeded, but taskgate cannot return its output: it is not valid JSON (invalid character 'N' looking for beginning of value, at byte 12)"}
	if err != nil || out.State != want.State || out.Native != want.Native || out.Error != want.Error || out.Cause != want.Cause || out.Output != nil {
		t.Errorf("Wait: %+v, %v\nwant %+v", out, err, want)
	}
}
