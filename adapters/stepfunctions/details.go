package stepfunctions

import (
	"encoding/json"
	"strings"

	"github.com/taskgate/taskgate/adapters/driver"
)

// historyWorth reports whether the history of a running execution of a state machine with this
// definition (Amazon States Language) can say more than DescribeExecution: whether the machine can
// ask (a .waitForTaskToken task), or has progress to report: a Map (items done), a Parallel
// (states that run at once), a task with Retry (its attempt and last error), or more than one
// state that lasts (a Task or a Wait: which of them runs). A definition it cannot read is worth
// it, so that nothing is lost.
func historyWorth(definition string) bool {
	var top states
	if err := json.Unmarshal([]byte(definition), &top); err != nil || len(top.States) == 0 {
		return true
	}
	lasting := 0
	var worth func(s states) bool
	worth = func(s states) bool {
		for _, st := range s.States {
			switch st.Type {
			case "Map", "Parallel":
				return true
			case "Task":
				if strings.HasSuffix(st.Resource, waitSuffix) || len(st.Retry) > 0 {
					return true
				}
				lasting++
			case "Wait":
				lasting++
			}
			for _, b := range append(st.Branches, st.ItemProcessor, st.Iterator) {
				if worth(b) {
					return true
				}
			}
		}
		return lasting > 1
	}
	return worth(top)
}

// states is the part of a definition (or of a Parallel branch, a Map's processor) that
// historyWorth reads.
type states struct {
	States map[string]struct {
		Type          string
		Resource      string
		Retry         []json.RawMessage
		Branches      []states
		ItemProcessor states
		Iterator      states
	}
}

// readHistory is whether a poll of a running execution reads its history, as the mapping says
// (stateMachine: {arn: ..., history: true|false}).
type readHistory int

const (
	// historyAuto: as Check finds from the definition (historyWorth); until it has, always.
	historyAuto readHistory = iota
	historyRead
	historySkip
)

// readsHistory reports whether a Describe of a running execution of t reads its history: as the
// target says, else as Check found from its definition, else (not checked yet) it does.
func (e *conn) readsHistory(t driver.Target) bool {
	s, _ := t.Spec.(spec)
	switch s.history {
	case historyRead:
		return true
	case historySkip:
		return false
	}
	worth, checked := e.history.Load(t.Name)
	return !checked || worth.(bool)
}
