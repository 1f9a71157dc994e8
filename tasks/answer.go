package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/mapping"
)

// Questions a running workflow asks (human input). The questions live in the engine and are read
// with its status; an answer goes straight back to the engine. Every dialect shows them in its own
// words and delivers answers through Answer, which checks each one against its question's schema
// before the engine sees any.

// Answer is a caller's response to one question, as the caller gave it: accept (with the form's
// content, a JSON object), decline or cancel (adapters.ActionAccept...).
type Answer struct {
	Action  string
	Content json.RawMessage
}

// Answers give the caller's answer to question q; ok is false when it gave none. An error says
// the answer it gave is not one (the dialect could not read it), or that it could not be asked.
type Answers func(q *mapping.Question) (a Answer, ok bool, err error)

// Given returns answers already read, by question key.
func Given(m map[string]Answer) Answers {
	return func(q *mapping.Question) (Answer, bool, error) {
		a, ok := m[q.Key]
		return a, ok, nil
	}
}

// Questions returns t's open questions as a client is shown them, oldest first. A question whose
// schema taskgate cannot use (among them one that refers to another schema, which taskgate never
// loads: the workflow is less trusted than the mapping) is shown as such, with a schema that holds
// nothing of the workflow's: no client is handed a reference to follow.
func (t *Task) Questions() []adapters.Question {
	if t.Status.State != adapters.InputRequired {
		return nil
	}
	shown := make([]adapters.Question, 0, len(t.Status.Inputs))
	for _, in := range t.Status.Inputs {
		if _, err := mapping.CompileAnswerSchema(in.Schema); err != nil {
			in.Message, in.Schema = unaskable(in.Key, err), json.RawMessage(`{"type":"object","properties":{}}`)
		}
		shown = append(shown, in)
	}
	return shown
}

// OpenQuestions returns t's open questions, ready to ask and to check answers against; an error
// when one of them cannot be answered through taskgate (Questions shows it as such).
func (t *Task) OpenQuestions() ([]*mapping.Question, error) {
	if t.Status.State != adapters.InputRequired {
		return nil, nil
	}
	qs := make([]*mapping.Question, 0, len(t.Status.Inputs))
	for _, in := range t.Status.Inputs {
		schema, err := mapping.CompileAnswerSchema(in.Schema)
		if err != nil {
			return nil, &Error{Kind: Internal, Message: unaskable(in.Key, err), Err: err}
		}
		qs = append(qs, &mapping.Question{Key: in.Key, Message: in.Message, Schema: schema})
	}
	return qs, nil
}

// unaskable says why the question key cannot be answered through taskgate.
func unaskable(key string, err error) string {
	return fmt.Sprintf("The workflow's question %q cannot be answered through taskgate: %v", key, err)
}

// check reads one answer to question q as one the engine can take: a known action and, when
// accepted, content that fits q's schema. The error names the field at fault.
func check(q *mapping.Question, a Answer) (adapters.Answer, error) {
	out := adapters.Answer{Action: a.Action}
	switch a.Action {
	case adapters.ActionAccept:
		if err := q.Schema.Check(a.Content); err != nil {
			return adapters.Answer{}, Invalidf("the answer to %q does not fit its schema: %v", q.Key, err)
		}
		out.Content = a.Content
	case adapters.ActionDecline, adapters.ActionCancel:
	default:
		return adapters.Answer{}, Invalidf("the response to %q: action %q is not accept, decline or cancel", q.Key, a.Action)
	}
	if err := out.Check(); err != nil {
		return adapters.Answer{}, Invalidf("the answer to %q: %v", q.Key, err)
	}
	return out, nil
}

// Answer delivers answers to t's open questions and returns the keys it delivered. Keys that are
// not open (never asked, answered already, or the task no longer waits) are ignored whatever they
// hold; every answer to an open key is checked before any is delivered, so a wrong one changes
// nothing. It reads t's status first, so t shows what the task waited on.
func (s *Service) Answer(ctx context.Context, t *Task, answers Answers) ([]string, error) {
	if err := s.Describe(ctx, t); err != nil {
		return nil, err
	}
	qs, err := t.OpenQuestions()
	if err != nil {
		return nil, err
	}
	type delivery struct {
		key    string
		answer adapters.Answer
	}
	var ds []delivery
	for _, q := range qs {
		a, ok, err := answers(q)
		if !ok {
			continue
		}
		if err != nil {
			return nil, err
		}
		checked, err := check(q, a)
		if err != nil {
			return nil, err
		}
		ds = append(ds, delivery{q.Key, checked})
	}
	var delivered []string
	ectx, e := s.engine(ctx, t.Tool)
	for _, d := range ds {
		err := e.Answer(ectx, t.Tool.Target, t.claims.Ref, d.key, d.answer)
		s.auditLine(ctx, "answer", t.Tool, t.claims.Ref, outcome(err))
		switch {
		case errors.Is(err, adapters.ErrNotFound) || errors.Is(err, adapters.ErrEnded):
			// answered meanwhile, or the execution went on without it
		case errors.Is(err, adapters.ErrInvalid):
			return delivered, Invalidf("the answer to %q was refused: %s", d.key, driver.ReasonOf(err, "the engine refused it as invalid"))
		case err != nil:
			return delivered, engineError("Failed to deliver the answer to "+d.key, err)
		default:
			delivered = append(delivered, d.key)
		}
	}
	return delivered, nil
}
