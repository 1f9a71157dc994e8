package tasks

import (
	"context"
	"errors"

	"github.com/taskgate/taskgate/adapters"
)

// ErrAsking ends a wait whose task waits on questions that go back to the caller in the answer.
var ErrAsking = errors.New("the workflow waits on answers")

// An Asker is how a waiting call's caller is asked the questions its task waits on. Called with
// the task each time the wait finds it waiting on questions, it asks them and has the answers
// delivered (Service.Answer), or reports that the wait should end instead (stop), the questions to
// go back to the caller in the answer.
type Asker func(ctx context.Context, t *Task) (stop bool, err error)

// Wait waits until t's execution ends, or ctx does, and records how it ended in t. With an
// Asker, the wait wakes at the task's poll interval to look for questions and hands them to ask;
// without, it blocks in the engine. A failed question stops the asking, not the wait; an Asker
// that stops ends the wait with ErrAsking. Otherwise the error is the context's when it ended
// first (a caller gone, a timeout), or says how the engine failed.
func (s *Service) Wait(ctx context.Context, t *Task, ask Asker) error {
	ectx, e := s.engine(ctx, t.Tool)
	for {
		if ask == nil {
			o, err := e.Wait(ectx, t.Tool.Target, t.claims.Ref, t.pace())
			if err != nil {
				return waitError("Failed to wait for the task", t.Tool, err)
			}
			t.end(o)
			return nil
		}
		waitCtx, stop := context.WithTimeout(ectx, t.PollInterval())
		o, err := e.Wait(waitCtx, t.Tool.Target, t.claims.Ref, t.pace())
		timedOut := waitCtx.Err() != nil && ctx.Err() == nil
		stop()
		switch {
		case err == nil:
			t.end(o)
			return nil
		case !timedOut:
			return waitError("Failed to wait for the task", t.Tool, err)
		}
		if err := s.Describe(ctx, t); err != nil || t.Status.State != adapters.InputRequired {
			continue
		}
		switch stop, err := ask(ctx, t); {
		case err != nil:
			s.log.Warn("asking a task's questions failed; waiting without asking", "tool", t.Tool.Name, "error", err)
			ask = nil
		case stop:
			return ErrAsking
		}
	}
}
