package tasks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
)

// Questions before the start (a tool's ask:), and those a waiting call hands back to its caller:
// a call is answered with the questions and a sealed request state, and the call that brings the
// answers and the state back goes on (starts the workflow, or resumes the wait). Nothing is
// stored: the state says which call it belongs to.

// askFor is how long a request state stays good: a person answers in minutes.
const askFor = 30 * time.Minute

// askState is what a request state carries from one round of a call to the next.
type askState struct {
	Tool    string `json:"t"`
	Args    string `json:"a"` // SHA-256 of the arguments as sent
	Caller  string `json:"c"`
	Expires int64  `json:"e"` // unix seconds
	// Task is the task id of the execution a waiting call started, when the questions are its
	// workflow's: the retry resumes that execution.
	Task string `json:"k,omitempty"`
}

// RequestState seals the state the next round of a call of tool with args must bring back; task
// is the id of the task the call waits on, if it started one.
func (s *Service) RequestState(ctx context.Context, tool *mapping.Tool, args json.RawMessage, task string) string {
	state, _ := json.Marshal(askState{Tool: tool.Name, Args: argsSum(args), Caller: s.callers.current(ctx, tool), Expires: s.now().Add(askFor).Unix(), Task: task})
	return s.tokens.SealState(state)
}

// OpenRequestState checks that a request state is one this service gave for this call (tool and
// args) of this caller, and not stale, and returns the id of the task it names, if any.
func (s *Service) OpenRequestState(ctx context.Context, tool *mapping.Tool, args json.RawMessage, state string) (task string, err error) {
	data, err := s.tokens.OpenState(state)
	var st askState
	switch {
	case err != nil || json.Unmarshal(data, &st) != nil:
		return "", Invalidf("requestState is not one taskgate gave: call %s again without inputResponses to be asked anew", tool.Name)
	case st.Tool != tool.Name || st.Args != argsSum(args) || !s.callerOf(ctx, tool, st.Caller):
		return "", Invalidf("requestState belongs to another call: repeat the arguments of the call that was asked, or call %s again without inputResponses", tool.Name)
	case st.Task == "" && s.now().Unix() > st.Expires: // a task's id has a ttl of its own
		return "", Invalidf("requestState has expired (after %s): call %s again without inputResponses to be asked anew", askFor, tool.Name)
	}
	return st.Task, nil
}

// argsSum is the SHA-256 of the arguments, however a client spaces and orders them (absent and
// null read as {}).
func argsSum(args json.RawMessage) string {
	var v any
	json.Unmarshal(args, &v)
	if v == nil {
		v = map[string]any{}
	}
	canonical, _ := json.Marshal(v) // map keys sorted
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}

// Gathered is what the answers a call brings to its tool's questions come to.
type Gathered struct {
	// Answers are the accepted answers, by key, to start with.
	Answers map[string]json.RawMessage
	// Open are the questions the call brought no answer to.
	Open []*mapping.Question
}

// Gather reads the answers to tool's questions, in the order it asks them. An answer that does
// not fit is Invalid; a question declined or dismissed is Refused (nothing starts), and no
// question after it is asked.
func (s *Service) Gather(tool *mapping.Tool, answers Answers) (Gathered, error) {
	g := Gathered{Answers: map[string]json.RawMessage{}}
	for _, q := range tool.Ask {
		a, ok, err := answers(q)
		switch {
		case err != nil:
			return g, err
		case !ok:
			g.Open = append(g.Open, q)
			continue
		}
		checked, err := check(q, a)
		switch {
		case err != nil:
			return g, err
		case checked.Action != adapters.ActionAccept:
			return g, refusedf("%s did not start: the question %q was %s (%s)", tool.Name, q.Key, refusal(checked.Action), q.Message)
		}
		g.Answers[q.Key] = checked.Content
	}
	return g, nil
}

// refusal is how a person refused a question, in words.
func refusal(action string) string {
	if action == adapters.ActionDecline {
		return "declined"
	}
	return "dismissed"
}
