package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
)

// Questions a running workflow asks (human input). The questions live in the engine and are read
// on each poll; an answer goes straight back to the engine. Every dialect shows them in its own
// words and delivers answers through answer, which checks each one against its question's schema
// before the engine sees any.

// questions are the open questions of a task that waits on input, ready to check answers against.
func questions(t *task) ([]*mapping.Question, error) {
	if t.status.State != adapters.InputRequired {
		return nil, nil
	}
	qs := make([]*mapping.Question, 0, len(t.status.Inputs))
	for _, in := range t.status.Inputs {
		schema, err := mapping.CompileAnswerSchema(in.Schema)
		if err != nil {
			return nil, &taskError{kind: errInternal, msg: unaskable(in.Key, err), cause: err}
		}
		qs = append(qs, &mapping.Question{Key: in.Key, Message: in.Message, Schema: schema})
	}
	return qs, nil
}

// shownQuestions are a task's open questions as clients are shown them, oldest first. A question
// whose schema taskgate cannot use (among them one that refers to another schema, which taskgate
// never loads: the workflow is less trusted than the mapping) is shown as such, with a schema
// that holds nothing of the workflow's: no client is handed a reference to follow.
func shownQuestions(t *task) []adapters.Question {
	if t.status.State != adapters.InputRequired {
		return nil
	}
	shown := make([]adapters.Question, 0, len(t.status.Inputs))
	for _, in := range t.status.Inputs {
		if _, err := mapping.CompileAnswerSchema(in.Schema); err != nil {
			in.Message, in.Schema = unaskable(in.Key, err), json.RawMessage(`{"type":"object","properties":{}}`)
		}
		shown = append(shown, in)
	}
	return shown
}

// unaskable says why the question key cannot be answered through taskgate.
func unaskable(key string, err error) string {
	return fmt.Sprintf("The workflow's question %q cannot be answered through taskgate: %v", key, err)
}

// openRequests are a task's open questions as form-mode elicitations, oldest first.
func openRequests(t *task) inputRequests {
	qs := shownQuestions(t)
	if qs == nil {
		return nil
	}
	reqs := make(inputRequests, 0, len(qs))
	for _, q := range qs {
		reqs = append(reqs, keyedRequest{q.Key, elicitation(q.Message, q.Schema)})
	}
	return reqs
}

// readResponse reads one client response to question q: an answer the engine can take, its
// content checked against q's schema. The error names the field at fault.
func readResponse(q *mapping.Question, resp mcp.InputResponse) (adapters.Answer, error) {
	er, ok := resp.(*mcp.ElicitResult)
	if !ok {
		return adapters.Answer{}, invalid("the response to %q is not an answer to an elicitation (want {\"action\": \"accept\", \"content\": {...}})", q.Key)
	}
	a := adapters.Answer{Action: er.Action}
	switch er.Action {
	case adapters.ActionAccept:
		content, err := json.Marshal(er.Content)
		if err != nil {
			return adapters.Answer{}, invalid("the answer to %q: %v", q.Key, err)
		}
		if err := q.Schema.Check(content); err != nil {
			return adapters.Answer{}, invalid("the answer to %q does not fit its schema: %v", q.Key, err)
		}
		a.Content = content
	case adapters.ActionDecline, adapters.ActionCancel:
	default:
		return adapters.Answer{}, invalid("the response to %q: action %q is not accept, decline or cancel", q.Key, er.Action)
	}
	if err := a.Check(); err != nil {
		return adapters.Answer{}, invalid("the answer to %q: %v", q.Key, err)
	}
	return a, nil
}

// responses give the client's response to the question key; ok is false when it gave none.
type responses func(key string) (resp mcp.InputResponse, ok bool, err error)

// given are responses already read.
func given(m map[string]mcp.InputResponse) responses {
	return func(key string) (mcp.InputResponse, bool, error) {
		r, ok := m[key]
		return r, ok, nil
	}
}

// sent are responses as a request carries them, each read only when its key is asked for: the
// others are ignored whatever they hold.
func sent(m map[string]json.RawMessage) responses {
	return func(key string) (mcp.InputResponse, bool, error) {
		raw, ok := m[key]
		if !ok {
			return nil, false, nil
		}
		var r mcp.ElicitResult
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, true, invalid("the response to %q is not the result of an elicitation: %v", key, err)
		}
		return &r, true, nil
	}
}

// answer delivers responses (elicitation results, by key) to the task's open questions and returns
// the keys it delivered. Keys that are not open (never asked, answered already, or the task no
// longer waits) are ignored whatever they hold, as the tasks extension says; every response to an
// open key is checked before any is delivered, so a wrong one changes nothing.
func (s *Server) answer(ctx context.Context, t *task, responses responses) ([]string, error) {
	if err := s.describe(ctx, t); err != nil {
		return nil, err
	}
	qs, err := questions(t)
	if err != nil {
		return nil, err
	}
	type delivery struct {
		key    string
		answer adapters.Answer
	}
	var ds []delivery
	for _, q := range qs {
		resp, ok, err := responses(q.Key)
		if !ok {
			continue
		}
		if err != nil {
			return nil, err
		}
		a, err := readResponse(q, resp)
		if err != nil {
			return nil, err
		}
		ds = append(ds, delivery{q.Key, a})
	}
	var delivered []string
	for _, d := range ds {
		err := s.engines[t.tool.Engine].Answer(ctx, t.tool.Target, t.claims.Ref, d.key, d.answer)
		s.auditLine(ctx, "answer", t.tool, t.claims.Ref, outcome(err))
		switch {
		case errors.Is(err, adapters.ErrNotFound) || errors.Is(err, adapters.ErrEnded):
			// answered meanwhile, or the execution went on without it
		case errors.Is(err, adapters.ErrInvalid):
			return delivered, invalid("the answer to %q was refused by the workflow: %v", d.key, err)
		case err != nil:
			return delivered, engineError("Failed to deliver the answer to "+d.key, err)
		default:
			delivered = append(delivered, d.key)
		}
	}
	return delivered, nil
}

// elicits reports whether taskgate can ask the caller itself with elicitation/create: a connection
// that carries server requests (stdio) from a client before 2026-07-28 that declared elicitation
// (go-sdk sends no elicitation/create on 2026-07-28, where questions go back in the result).
func elicits(c caps) bool {
	if c.modern || c.session == nil || c.conn == "" {
		return false
	}
	ip := c.session.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil
}

// elicit asks the caller question q of tool with a form-mode elicitation/create, meta added.
func elicit(ctx context.Context, c caps, tool *mapping.Tool, q *mapping.Question, meta mcp.Meta) (*mcp.ElicitResult, error) {
	res, err := c.session.Elicit(ctx, &mcp.ElicitParams{Meta: meta, Mode: "form", Message: q.Message, RequestedSchema: q.Schema.JSON})
	if err != nil {
		return nil, invalid("asking %s's question %q: %v", tool.Name, q.Key, err)
	}
	return res, nil
}

// askOpenQuestions asks the caller each open question of t with elicitation/create, meta added to
// each request (it says which task asks), and delivers the answers.
func (s *Server) askOpenQuestions(ctx context.Context, c caps, t *task, meta mcp.Meta) error {
	qs, err := questions(t)
	if err != nil {
		return err
	}
	for _, q := range qs {
		res, err := elicit(ctx, c, t.tool, q, meta)
		if err != nil {
			return err
		}
		if _, err := s.answer(ctx, t, given(map[string]mcp.InputResponse{q.Key: res})); err != nil {
			return err
		}
	}
	return nil
}

// errQuestionsOpen ends a wait whose questions go back to the caller in the result.
var errQuestionsOpen = errors.New("the workflow waits on answers")

// inRounds is a wait whose caller answers questions in rounds: they go back in the result, and
// the caller's retry brings the answers. answered are the keys it answered in earlier rounds,
// which a reading taken before the engine had the answer may still show open (a key is never
// asked twice).
type inRounds struct{ answered []string }

// asks reports whether the task waits on a question not answered yet.
func (r *inRounds) asks(t *task) bool {
	return slices.ContainsFunc(t.status.Inputs, func(q adapters.Question) bool { return !slices.Contains(r.answered, q.Key) })
}

// waitAsking waits until t's execution ends. When the caller can be asked, the wait wakes at the
// task's poll interval to look for questions: a caller that answers in rounds (rounds set) gets
// them in the result, so the wait ends with errQuestionsOpen; one that takes elicitation/create
// (elicits) is asked, and its answers delivered. Otherwise the wait blocks in the engine. A
// failed question stops the asking, not the wait.
func (s *Server) waitAsking(ctx context.Context, c caps, t *task, rounds *inRounds, meta mcp.Meta) (adapters.Outcome, error) {
	e := s.engines[t.tool.Engine]
	asking := rounds != nil || elicits(c)
	for {
		if !asking {
			return e.Wait(t.paced(ctx), t.tool.Target, t.claims.Ref)
		}
		waitCtx, stop := context.WithTimeout(t.paced(ctx), t.pollInterval())
		o, err := e.Wait(waitCtx, t.tool.Target, t.claims.Ref)
		timedOut := waitCtx.Err() != nil && ctx.Err() == nil
		stop()
		if err == nil || !timedOut {
			return o, err
		}
		if err := s.describe(ctx, t); err != nil {
			continue
		}
		switch {
		case t.status.State != adapters.InputRequired:
		case rounds != nil:
			if rounds.asks(t) {
				return adapters.Outcome{}, errQuestionsOpen
			}
		default:
			if err := s.askOpenQuestions(ctx, c, t, meta); err != nil {
				s.log.Warn("asking a task's questions failed; waiting without asking", "tool", t.tool.Name, "error", err)
				asking = false
			}
		}
	}
}
