package taskcall

// Questions. A tool may ask before it starts (tools/call answers input_required, a multi
// round-trip request) and its task while it runs (tasks/get shows input_required). taskgate call answers each question from
// --answer or --decline, else asks it on the terminal one field at a time, and sends the response
// back: the call repeated with inputResponses and requestState, or tasks/update. The server checks
// every answer against its schema; a refusal (-32602) is shown and the question asked again.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/taskgate/taskgate/internal/mcpclient"
)

// askAgainAfter is how long a question put off with "later" waits before it is asked again.
const askAgainAfter = time.Minute

// inputRequest is one question as the server sends it: an elicitation, in form mode here.
type inputRequest struct {
	Method string `json:"method"`
	Params struct {
		Mode            string          `json:"mode"`
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	} `json:"params"`
}

// inputRequests are the open questions by key, in the order the server sent them.
type inputRequests struct {
	keys []string
	reqs map[string]inputRequest
}

func (q *inputRequests) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &q.reqs); err != nil {
		return err
	}
	keys, err := objectKeys(b)
	q.keys = keys
	return err
}

// objectKeys are the keys of a JSON object in their order in the text.
func objectKeys(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("want a JSON object, got %.40s", raw)
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// asker answers questions: from the command line, else on the terminal.
type asker struct {
	given   map[string]json.RawMessage // responses from --answer and --decline by key, each used once
	term    *prompter                  // nil: no terminal to ask on
	w       io.Writer
	disp    display
	shown   map[string]bool      // questions whose message was printed, until answered
	later   map[string]time.Time // questions put off, until when
	refused map[string]string    // the server's words on the last answer it refused, by key
	// sent are the questions answered: a reading taken before the engine had an answer may show
	// its question still open, and a key is never asked twice (the extension says to track them).
	sent map[string]bool
}

func newAsker(given map[string]json.RawMessage, term *prompter, w io.Writer, disp display) *asker {
	return &asker{given: given, term: term, w: w, disp: disp,
		shown: map[string]bool{}, later: map[string]time.Time{}, refused: map[string]string{}, sent: map[string]bool{}}
}

// unanswered is a question that ends the call without an answer.
type unanswered struct {
	key, message, why string
	schema            json.RawMessage
}

func (u *unanswered) Error() string {
	return fmt.Sprintf("the question %q (%s) has no answer: %s; answer it with --answer %s or --decline %s",
		u.key, u.message, u.why, shellQuote(u.key+"="+exampleContent(u.schema)), shellQuote(u.key))
}

// response is the response to one question, from the command line or the terminal. canWait
// offers to put the question off, which a running task can afford and a call not yet started
// cannot; a question put off has a nil response.
func (a *asker) response(ctx context.Context, key string, req inputRequest, canWait bool) (json.RawMessage, error) {
	if !a.shown[key] {
		a.shown[key] = true
		a.disp.hold(func() { fmt.Fprintf(a.w, "question %q: %s\n", key, req.Params.Message) })
	}
	if r, ok := a.given[key]; ok {
		delete(a.given, key)
		return r, nil
	}
	if req.Method != "elicitation/create" || (req.Params.Mode != "" && req.Params.Mode != "form") {
		return nil, &unanswered{key: key, message: req.Params.Message, schema: req.Params.RequestedSchema,
			why: fmt.Sprintf("it is a %s request in %q mode, which taskgate call cannot ask on the terminal", req.Method, req.Params.Mode)}
	}
	why := "there is no terminal to ask it on"
	if msg, ok := a.refused[key]; ok {
		why = "the server refused the answer given: " + msg
	}
	if a.term == nil {
		return nil, &unanswered{key: key, message: req.Params.Message, schema: req.Params.RequestedSchema, why: why}
	}
	var resp json.RawMessage
	var err error
	a.disp.hold(func() { resp, err = a.term.ask(ctx, key, req.Params.RequestedSchema, canWait) })
	if errors.Is(err, io.EOF) {
		err = &unanswered{key: key, message: req.Params.Message, schema: req.Params.RequestedSchema, why: "standard input ended"}
	}
	return resp, err
}

// order puts first the questions answered on the command line, so that all of those are tried
// before any is asked, and those whose answer was just refused, so that they are asked again at
// once.
func (a *asker) order(keys []string) []string {
	first := func(key string) int {
		_, given := a.given[key]
		_, refused := a.refused[key]
		if given || refused {
			return 0
		}
		return 1
	}
	sorted := slices.Clone(keys)
	slices.SortStableFunc(sorted, func(x, y string) int { return cmp.Compare(first(x), first(y)) })
	return sorted
}

// refuse shows why the server refused the answer to key, which is then asked again.
func (a *asker) refuse(key, msg string) {
	a.refused[key] = msg
	a.disp.hold(func() { fmt.Fprintf(a.w, "the answer to %q was refused: %s\n", key, msg) })
}

func (a *asker) answered(key string) {
	delete(a.shown, key)
	delete(a.refused, key)
	a.sent[key] = true
}

// putOff reports whether one of t's open questions was put off for later.
func (a *asker) putOff(t *taskResult) bool {
	return slices.ContainsFunc(t.InputRequests.keys, func(key string) bool { return !a.later[key].IsZero() && !a.sent[key] })
}

// beforeStart answers the questions a tool asks before it starts: while tools/call (raw) answers
// input_required, it adds the answer to one more question and repeats the call with all answers
// so far and the latest requestState, since the server keeps nothing between rounds. One new
// answer a round, so that a refusal is that answer's.
func (a *asker) beforeStart(ctx context.Context, raw json.RawMessage, params map[string]any, send func(map[string]any) (json.RawMessage, error)) (json.RawMessage, error) {
	responses := map[string]json.RawMessage{}
	for {
		var r struct {
			ResultType    string        `json:"resultType"`
			InputRequests inputRequests `json:"inputRequests"`
			RequestState  string        `json:"requestState"`
		}
		if json.Unmarshal(raw, &r) != nil || r.ResultType != "input_required" {
			return raw, nil
		}
		if len(r.InputRequests.keys) == 0 {
			return nil, fmt.Errorf("the server answered input_required without inputRequests: %s", raw)
		}
		key := a.order(r.InputRequests.keys)[0]
		resp, err := a.response(ctx, key, r.InputRequests.reqs[key], false)
		if err != nil {
			return nil, err
		}
		responses[key] = resp
		params["inputResponses"], params["requestState"] = responses, r.RequestState
		next, err := send(params)
		var re *mcpclient.Error
		switch {
		case errors.As(err, &re) && re.Code == -32602:
			delete(responses, key)
			a.refuse(key, re.Message)
		case err != nil:
			return nil, err
		default:
			a.answered(key)
			raw = next
		}
	}
}

// answerOpen answers the open questions of task t, each with a tasks/update of its own so that
// the workflow can go on with one while another is still being answered; sent says whether any
// answer went.
func (a *asker) answerOpen(ctx context.Context, c *Client, t *taskResult) (sent bool, err error) {
	for _, key := range a.order(t.InputRequests.keys) {
		if time.Now().Before(a.later[key]) || a.sent[key] {
			continue
		}
		for {
			resp, err := a.response(ctx, key, t.InputRequests.reqs[key], true)
			if err != nil {
				return sent, err
			}
			if resp == nil {
				a.later[key] = time.Now().Add(askAgainAfter)
				break
			}
			_, err = c.call(ctx, "tasks/update", map[string]any{"taskId": t.TaskID, "inputResponses": map[string]json.RawMessage{key: resp}})
			var re *mcpclient.Error
			if errors.As(err, &re) && re.Code == -32602 {
				a.refuse(key, re.Message)
				continue
			}
			if err != nil {
				return sent, fmt.Errorf("answering %q: %w", key, err)
			}
			a.answered(key)
			a.disp.show(t.Status, fmt.Sprintf("answer to %q sent", key))
			sent = true
			break
		}
	}
	return sent, nil
}

// ParseAnswers reads --answer KEY=JSON and --decline KEY into responses by key.
func ParseAnswers(answers, declines []string) (map[string]json.RawMessage, error) {
	given := map[string]json.RawMessage{}
	for _, s := range answers {
		key, content, ok := strings.Cut(s, "=")
		var v any
		if !ok || key == "" || json.Unmarshal([]byte(content), &v) != nil {
			return nil, fmt.Errorf(`--answer %s: want KEY=JSON, the key of the question and the form's content as one JSON object, like --answer 'approve={"approve": true}'`, s)
		}
		if _, ok := v.(map[string]any); !ok {
			return nil, fmt.Errorf(`--answer %s: the answer must be a JSON object of the form's fields, like --answer '%s={"approve": true}'`, s, key)
		}
		if _, dup := given[key]; dup {
			return nil, fmt.Errorf("--answer %s: %q has an answer already", s, key)
		}
		given[key], _ = json.Marshal(map[string]any{"action": "accept", "content": json.RawMessage(content)})
	}
	for _, key := range declines {
		if _, dup := given[key]; dup || key == "" {
			return nil, fmt.Errorf("--decline %q: want the key of a question that has no --answer or --decline yet", key)
		}
		given[key] = json.RawMessage(`{"action":"decline"}`)
	}
	return given, nil
}

// shellQuote quotes s for a POSIX shell when it needs quotes.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
