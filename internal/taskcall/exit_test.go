package taskcall

import (
	"errors"
	"testing"
)

// Every way a call ends maps to its documented exit status, however the step that ended it
// wrapped the cause.
func TestExitStatus(t *testing.T) {
	un := &unanswered{key: "approve", why: "no terminal to ask on"}
	cancelled := taskResult{TaskID: "t1", Status: "cancelled"}
	_, cancelledErr := outcome(cancelled)
	_, failedErr := outcome(taskResult{TaskID: "t1", Status: "failed"})
	for _, c := range []struct {
		name string
		err  error
		want int
	}{
		{"success", nil, 0},
		{"question before the start", &endError{state: "input_required", err: un}, ExitUnanswered},
		{"question of the running task", answerFailure(taskResult{TaskID: "t1", Status: "input_required"}, un), ExitUnanswered},
		{"answer refused", answerFailure(taskResult{TaskID: "t1"}, errors.New("bad request")), ExitFailed},
		{"Ctrl-C, task cancelled", &endError{state: "interrupted", err: errInterrupted, told: true}, ExitInterrupted},
		{"Ctrl-C before the answer", failure("%w before echo answered", errInterrupted), ExitInterrupted},
		{"task failed", failedErr, ExitFailed},
		{"task cancelled", cancelledErr, ExitFailed},
		{"tool error", &endError{state: "completed", err: errToolFailed, told: true}, ExitFailed},
		{"server unreachable", failure("calling echo: %v", errors.New("connection refused")), ExitFailed},
	} {
		if got := exitStatus(c.err); got != c.want {
			t.Errorf("%s: exitStatus(%v) = %d, want %d", c.name, c.err, got, c.want)
		}
	}
	if _, err := outcome(taskResult{Status: "completed", Result: []byte(`{}`)}); err != nil {
		t.Errorf("a completed task ended with %v", err)
	}
}
