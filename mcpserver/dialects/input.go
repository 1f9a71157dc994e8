package dialects

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
)

// Questions, as MCP carries them: inputRequests in a result (the tasks extension's tasks/get,
// and a 2026-07-28 call answered in rounds), elicitation/create on a connection that carries
// server requests, and the answers that come back, turned into the task service's.

// openRequests are a task's open questions as form-mode elicitations, oldest first.
func openRequests(t *tasks.Task) inputRequests {
	qs := t.Questions()
	if qs == nil {
		return nil
	}
	reqs := make(inputRequests, 0, len(qs))
	for _, q := range qs {
		reqs = append(reqs, keyedRequest{q.Key, elicitation(q.Message, q.Schema)})
	}
	return reqs
}

// questionRequests are a tool's questions as the requests a client fulfils.
func questionRequests(qs []*mapping.Question) inputRequests {
	reqs := make(inputRequests, 0, len(qs))
	for _, q := range qs {
		reqs = append(reqs, keyedRequest{q.Key, elicitation(q.Message, q.Schema.JSON)})
	}
	return reqs
}

func elicitation(message string, schema json.RawMessage) inputRequest {
	return inputRequest{Params: elicitParams{Message: message, RequestedSchema: schema}}
}

// answerOf reads the client's response to question key as an answer.
func answerOf(key string, resp mcp.InputResponse) (tasks.Answer, error) {
	er, ok := resp.(*mcp.ElicitResult)
	if !ok {
		return tasks.Answer{}, tasks.Invalidf("the response to %q is not an answer to an elicitation (want {\"action\": \"accept\", \"content\": {...}})", key)
	}
	content, err := json.Marshal(er.Content)
	if err != nil {
		return tasks.Answer{}, tasks.Invalidf("the answer to %q: %v", key, err)
	}
	return tasks.Answer{Action: er.Action, Content: content}, nil
}

// inputResponses are the responses a retried call brings, as go-sdk read them.
func inputResponses(m map[string]mcp.InputResponse) tasks.Answers {
	return func(q *mapping.Question) (tasks.Answer, bool, error) {
		resp, ok := m[q.Key]
		if !ok {
			return tasks.Answer{}, false, nil
		}
		a, err := answerOf(q.Key, resp)
		return a, true, err
	}
}

// sent are responses as a task method carries them, each read only when its key is asked for:
// the others are ignored whatever they hold.
func sent(m map[string]json.RawMessage) tasks.Answers {
	return func(q *mapping.Question) (tasks.Answer, bool, error) {
		raw, ok := m[q.Key]
		if !ok {
			return tasks.Answer{}, false, nil
		}
		var r mcp.ElicitResult
		if err := json.Unmarshal(raw, &r); err != nil {
			return tasks.Answer{}, true, tasks.Invalidf("the response to %q is not the result of an elicitation: %v", q.Key, err)
		}
		a, err := answerOf(q.Key, &r)
		return a, true, err
	}
}

// elicits reports whether taskgate can ask the caller itself with elicitation/create: a connection
// that carries server requests (stdio) from a client before 2026-07-28 that declared elicitation
// (go-sdk sends no elicitation/create on 2026-07-28, where questions go back in the result).
func elicits(c caps) bool {
	if c.modern || c.session == nil || c.Conn == nil {
		return false
	}
	ip := c.session.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil
}

// elicit asks the caller question q of tool with a form-mode elicitation/create, meta added.
func elicit(ctx context.Context, c caps, tool *mapping.Tool, q *mapping.Question, meta mcp.Meta) (tasks.Answer, error) {
	res, err := c.session.Elicit(ctx, &mcp.ElicitParams{Meta: meta, Mode: "form", Message: q.Message, RequestedSchema: q.Schema.JSON})
	if err != nil {
		return tasks.Answer{}, tasks.Invalidf("asking %s's question %q: %v", tool.Name, q.Key, err)
	}
	return answerOf(q.Key, res)
}

// elicitor asks a waiting call's caller, with elicitation/create where it takes it (elicits), the
// questions its task waits on, meta added to each request (it says which task asks); nil when the
// caller cannot be asked.
func (r *Router) elicitor(c caps, meta mcp.Meta) tasks.Asker {
	if !elicits(c) {
		return nil
	}
	return func(ctx context.Context, t *tasks.Task) (bool, error) {
		return false, r.askOpenQuestions(ctx, c, t, meta)
	}
}

// askOpenQuestions asks the caller each open question of t with elicitation/create, meta added to
// each request, and delivers the answers.
func (r *Router) askOpenQuestions(ctx context.Context, c caps, t *tasks.Task, meta mcp.Meta) error {
	qs, err := t.OpenQuestions()
	if err != nil {
		return err
	}
	for _, q := range qs {
		a, err := elicit(ctx, c, t.Tool, q, meta)
		if err != nil {
			return err
		}
		if _, err := r.tasks.Answer(ctx, t, tasks.Given(map[string]tasks.Answer{q.Key: a})); err != nil {
			return err
		}
	}
	return nil
}
