package dialects

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
)

// Questions before the start (a tool's ask:). On 2026-07-28 this is MRTR: the first call answers
// input_required with the questions and a sealed requestState, and the call that brings the
// answers starts the workflow. On a connection that carries server requests (stdio) and a client
// that takes elicitation, taskgate asks with elicitation/create itself. Nothing is stored.

// asked is what the questions of a call came to: the answers to start with, or the answer to give
// instead (questions still open, a refusal).
type asked struct {
	answers map[string]json.RawMessage
	reply   mcp.Result
}

// ask gathers the answers to a tool's questions. A tool without questions has none to gather.
func (r *Router) ask(ctx context.Context, c caps, tool *mapping.Tool, p *mcp.CallToolParamsRaw) (asked, error) {
	if len(tool.Ask) == 0 {
		return asked{}, nil
	}
	var answers tasks.Answers
	switch {
	case c.modern && p.RequestState == "" && len(p.InputResponses) == 0:
		return asked{reply: r.inputRequired(ctx, tool, p.Arguments, questionRequests(tool.Ask))}, nil
	case c.modern:
		if _, err := r.tasks.OpenRequestState(ctx, tool, p.Arguments, p.RequestState); err != nil {
			return asked{}, err
		}
		answers = inputResponses(p.InputResponses)
	case elicits(c):
		answers = func(q *mapping.Question) (tasks.Answer, bool, error) {
			a, err := elicit(ctx, c, tool, q, nil)
			return a, true, err
		}
	default:
		return asked{}, tasks.Invalidf("tool %s asks questions before it starts: call it on protocol 2026-07-28, or from a client that takes elicitation/create on a connection that carries it (stdio)", tool.Name)
	}
	g, err := r.tasks.Gather(tool, answers)
	switch why, refused := refusal(err); {
	case refused:
		return asked{reply: wireResult(tasks.ToolError("%s", why), c.modern)}, nil
	case err != nil:
		return asked{}, err
	case len(g.Open) > 0:
		return asked{reply: r.inputRequired(ctx, tool, p.Arguments, questionRequests(g.Open))}, nil
	}
	return asked{answers: g.Answers}, nil
}

// inputRequired asks reqs in a call of tool with args, with the state the next round must bring
// back.
func (r *Router) inputRequired(ctx context.Context, tool *mapping.Tool, args json.RawMessage, reqs inputRequests) mcp.Result {
	return &inputRequiredResult{InputRequests: reqs, RequestState: r.tasks.RequestState(ctx, tool, args, "")}
}
