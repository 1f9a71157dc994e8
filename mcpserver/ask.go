package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
)

// Questions before the start (a tool's ask:). On 2026-07-28 this is MRTR: the first call answers
// input_required with the questions and a sealed requestState, and the call that brings the
// answers starts the workflow. On a connection that carries server requests (stdio) and a client
// that takes elicitation, taskgate asks with elicitation/create itself. Nothing is stored.

// askFor is how long a requestState stays good: a person answers in minutes.
const askFor = 30 * time.Minute

// askState is what a requestState carries from one round of a call to the next.
type askState struct {
	Tool    string `json:"t"`
	Args    string `json:"a"` // SHA-256 of the arguments as sent
	Caller  string `json:"c"`
	Expires int64  `json:"e"` // unix seconds
	// Task is the task id of the execution a waiting call started, when the questions are its
	// workflow's: the retry resumes that execution.
	Task string `json:"k,omitempty"`
}

// asked is what the questions of a call came to: the answers to start with, or the answer to give
// instead (questions still open, a refusal).
type asked struct {
	answers map[string]json.RawMessage
	reply   mcp.Result
}

// ask gathers the answers to a tool's questions. A tool without questions has none to gather.
func (s *Server) ask(ctx context.Context, c caps, tool *mapping.Tool, p *mcp.CallToolParamsRaw) (asked, error) {
	if len(tool.Ask) == 0 {
		return asked{}, nil
	}
	switch {
	case c.modern:
		return s.askInRounds(ctx, c, tool, p)
	case elicits(c):
		return s.askByElicitation(ctx, c, tool)
	}
	return asked{}, invalid("tool %s asks questions before it starts: call it on protocol 2026-07-28, or from a client that takes elicitation/create on a connection that carries it (stdio)", tool.Name)
}

func (s *Server) askInRounds(ctx context.Context, c caps, tool *mapping.Tool, p *mcp.CallToolParamsRaw) (asked, error) {
	if p.RequestState == "" && len(p.InputResponses) == 0 {
		return asked{reply: s.inputRequired(ctx, tool, p.Arguments, questionRequests(tool.Ask), "")}, nil
	}
	if _, err := s.checkAskState(ctx, tool, p); err != nil {
		return asked{}, err
	}
	a := asked{answers: map[string]json.RawMessage{}}
	var open []*mapping.Question
	for _, q := range tool.Ask {
		resp, ok := p.InputResponses[q.Key]
		if !ok {
			open = append(open, q)
			continue
		}
		if over, err := a.take(c, tool, q, resp); over {
			return a, err
		}
	}
	if len(open) > 0 {
		return asked{reply: s.inputRequired(ctx, tool, p.Arguments, questionRequests(open), "")}, nil
	}
	return a, nil
}

func (s *Server) askByElicitation(ctx context.Context, c caps, tool *mapping.Tool) (asked, error) {
	a := asked{answers: map[string]json.RawMessage{}}
	for _, q := range tool.Ask {
		res, err := elicit(ctx, c, tool, q, nil)
		if err != nil {
			return asked{}, err
		}
		if over, err := a.take(c, tool, q, res); over {
			return a, err
		}
	}
	return a, nil
}

// take reads one response to q: an accepted answer that matches q's schema joins a's answers; a
// declined or dismissed question makes a's reply the tool error that says nothing started. It
// reports whether the asking is over: refused, or a response that is no answer to q (err).
func (a *asked) take(c caps, tool *mapping.Tool, q *mapping.Question, resp mcp.InputResponse) (bool, error) {
	ans, err := readResponse(q, resp)
	switch {
	case err != nil:
		return true, err
	case ans.Action != adapters.ActionAccept:
		a.reply = toolError("%s did not start: the question %q was %s (%s)", tool.Name, q.Key, refusal(ans.Action), q.Message).wire(c.modern)
		return true, nil
	}
	a.answers[q.Key] = ans.Content
	return false, nil
}

// refusal is how a person refused a question, in words.
func refusal(action string) string {
	if action == adapters.ActionDecline {
		return "declined"
	}
	return "dismissed"
}

// questionRequests are a tool's questions as the requests a client fulfils.
func questionRequests(qs []*mapping.Question) inputRequests {
	reqs := make(inputRequests, 0, len(qs))
	for _, q := range qs {
		reqs = append(reqs, keyedRequest{q.Key, elicitation(q.Message, q.Schema.JSON)})
	}
	return reqs
}

// inputRequired asks reqs in a call of tool with args, with the state the next round must bring
// back; task names the execution the call waits on, if it started one.
func (s *Server) inputRequired(ctx context.Context, tool *mapping.Tool, args json.RawMessage, reqs inputRequests, task string) mcp.Result {
	state, _ := json.Marshal(askState{Tool: tool.Name, Args: argsSum(args), Caller: callerOf(ctx), Expires: s.now().Add(askFor).Unix(), Task: task})
	return &inputRequiredResult{InputRequests: reqs, RequestState: s.tokens.SealState(state)}
}

func elicitation(message string, schema json.RawMessage) inputRequest {
	return inputRequest{Params: elicitParams{Message: message, RequestedSchema: schema}}
}

// checkAskState checks that a requestState is one this server gave for this call of this caller,
// and not stale.
func (s *Server) checkAskState(ctx context.Context, tool *mapping.Tool, p *mcp.CallToolParamsRaw) (askState, error) {
	data, err := s.tokens.OpenState(p.RequestState)
	var st askState
	switch {
	case err != nil || json.Unmarshal(data, &st) != nil:
		return st, invalid("requestState is not one taskgate gave: call %s again without inputResponses to be asked anew", tool.Name)
	case st.Tool != tool.Name || st.Args != argsSum(p.Arguments) || st.Caller != callerOf(ctx):
		return st, invalid("requestState belongs to another call: repeat the arguments of the call that was asked, or call %s again without inputResponses", tool.Name)
	case st.Task == "" && s.now().Unix() > st.Expires: // a task's id has a ttl of its own
		return st, invalid("requestState has expired (after %s): call %s again without inputResponses to be asked anew", askFor, tool.Name)
	}
	return st, nil
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
