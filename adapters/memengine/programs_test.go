package memengine_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/enginetest"
	"github.com/taskgate/taskgate/adapters/memengine"
)

func TestAskMessages(t *testing.T) {
	ctx := context.Background()
	e := memengine.New(memengine.Options{})
	defer e.Close()
	two := memengine.Job(memengine.AskTwo, 0)
	r, err := e.Start(ctx, two, driver.StartRequest{Input: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.Describe(ctx, two, r)
	if err != nil {
		t.Fatal(err)
	}
	want := driver.Status{State: driver.InputRequired, Native: "RUNNING", Message: "waiting for answers to 2 questions",
		Started: st.Started, Updated: st.Started, Inputs: []driver.Question{
			{Key: "first", Message: "first question: confirm?", Schema: memengine.ConfirmSchema},
			{Key: "second", Message: "second question: confirm?", Schema: memengine.ConfirmSchema},
		}}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("Describe:\n%+v\nwant\n%+v", st, want)
	}
	yes := driver.Answer{Action: driver.ActionAccept, Content: json.RawMessage(`{"confirm":true}`)}
	for _, c := range []struct {
		err  error
		is   error
		want string
	}{
		{e.Answer(ctx, two, r, "third", yes), driver.ErrNotFound, "memory: execution not found: " + r.ID + ` has no open question "third": it was answered, or never asked`},
		{e.Answer(ctx, two, r, "first", driver.Answer{Action: "maybe"}), driver.ErrInvalid, `memory: invalid request: answer action "maybe": want accept, decline or cancel`},
		{e.Answer(ctx, two, driver.Ref{ID: "ask-two/x"}, "first", yes), driver.ErrNotFound, "memory: execution not found: ask-two/x"},
	} {
		if !errors.Is(c.err, c.is) || c.err.Error() != c.want {
			t.Errorf("error %v\nwant %s", c.err, c.want)
		}
	}
	if err := e.Answer(ctx, two, r, "second", yes); err != nil {
		t.Fatal(err)
	}
	if st, _ := e.Describe(ctx, two, r); st.Message != `waiting for an answer to "first"` || len(st.Inputs) != 1 {
		t.Errorf("Describe after one answer: %+v", st)
	}
	if err := e.Answer(ctx, two, r, "first", driver.Answer{Action: driver.ActionCancel}); err != nil {
		t.Fatal(err)
	}
	out, err := e.Outcome(ctx, two, r)
	out.Status = driver.Status{}
	wantOut := driver.Outcome{State: driver.Failed, Native: "FAILED", Error: "taskgate.Dismissed", Cause: `the question "first" was dismissed`}
	if err != nil || !reflect.DeepEqual(out, wantOut) {
		t.Errorf("Outcome after a dismissal: %+v, %v; want %+v", out, err, wantOut)
	}
}

func TestSteps(t *testing.T) {
	ctx := context.Background()
	e := memengine.New(memengine.Options{})
	defer e.Close()
	steps := memengine.Job(memengine.Steps, 0)
	r, err := e.Start(ctx, steps, driver.StartRequest{Input: []byte(`{"version":"1.2.0","stepSeconds":0.3}`)})
	if err != nil {
		t.Fatal(err)
	}
	seen := enginetest.Messages(ctx, t, e, steps, r, 20*time.Millisecond)
	if want := []string{"step 1 of 3: compile", "step 2 of 3: test", "step 3 of 3: package"}; !reflect.DeepEqual(seen, want) {
		t.Errorf("messages %q, want %q", seen, want)
	}
	out, err := e.Outcome(ctx, steps, r)
	if err != nil || string(out.Output) != `{"status":"released","version":"1.2.0"}` {
		t.Errorf("Outcome: %+v, %v", out, err)
	}
}
