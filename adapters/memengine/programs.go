package memengine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/taskgate/taskgate/adapters/driver"
)

// ConfirmSchema is the schema of the answers "ask" and "ask-two" wait for.
var ConfirmSchema = json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)

// The errors a question's program fails with when it is declined or dismissed.
const (
	declinedError  = driver.DeclinedError
	dismissedError = driver.DismissedError
)

// ask opens questions, under e.mu.
func (x *execution) ask(qs ...driver.Question) {
	x.questions = append(x.questions, qs...)
	x.answers = map[string]json.RawMessage{}
	x.state = driver.InputRequired
}

// Answer delivers an answer to the open question key: "ask" and "ask-two" end as their
// documentation says.
func (e *Engine) Answer(_ context.Context, _ driver.Target, r driver.Ref, key string, a driver.Answer) error {
	if err := a.Check(); err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	x, err := e.lookup(r)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(x.questions, func(q driver.Question) bool { return q.Key == key })
	if i < 0 || x.state != driver.InputRequired {
		return fmt.Errorf("memory: %w: %s has no open question %q: it was answered, or never asked", driver.ErrNotFound, r, key)
	}
	x.questions = slices.Delete(x.questions, i, i+1)
	x.updated = time.Now()
	switch a.Action {
	case driver.ActionDecline:
		e.endLocked(r.ID, x, driver.Outcome{State: driver.Failed, Native: failed, Error: declinedError,
			Cause: fmt.Sprintf("the question %q was declined", key)})
	case driver.ActionCancel:
		e.endLocked(r.ID, x, driver.Outcome{State: driver.Failed, Native: failed, Error: dismissedError,
			Cause: fmt.Sprintf("the question %q was dismissed", key)})
	default:
		x.answers[key] = a.Content
		if len(x.questions) > 0 {
			return nil
		}
		out := a.Content
		if x.program == AskTwo {
			out, _ = json.Marshal(x.answers) // raw JSON objects always encode
		}
		e.endLocked(r.ID, x, driver.Outcome{State: driver.Succeeded, Native: succeeded, Output: out})
	}
	return nil
}

// stepNames are the steps of "steps".
var stepNames = []string{"compile", "test", "package"}

func stepMessage(i int) string {
	return fmt.Sprintf("step %d of %d: %s", i+1, len(stepNames), stepNames[i])
}

// steps runs the program "steps", under e.mu: the first step now, a timer for each next one.
func (e *Engine) steps(id string, x *execution, version string, each time.Duration) {
	x.message = stepMessage(0)
	for i := 1; i < len(stepNames); i++ {
		x.timers = append(x.timers, time.AfterFunc(time.Duration(i)*each, func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			if !x.state.Terminal() && !e.closed {
				x.message = stepMessage(i)
			}
		}))
	}
	out, _ := json.Marshal(map[string]string{"version": version, "status": "released"}) // strings always encode
	x.timers = append(x.timers, time.AfterFunc(time.Duration(len(stepNames))*each, func() {
		e.end(id, x, driver.Outcome{State: driver.Succeeded, Native: succeeded, Output: out})
	}))
}
