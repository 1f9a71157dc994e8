package main

// Questions. A tool may ask before it starts (tools/call answers input_required: MRTR) and its
// task while it runs (tasks/get shows input_required). taskgate call answers each question from
// --answer or --decline, else asks it on the terminal one field at a time, and sends the response
// back: the call repeated with inputResponses and requestState, or tasks/update. The server checks
// every answer against its schema; a refusal (-32602) is shown and the question asked again.

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/taskgate/taskgate/internal/mcpclient"
)

const (
	// exitUnanswered: a question was left without an answer, and the task goes on waiting.
	exitUnanswered = 3
	// askAgainAfter is how long a question put off with "later" waits before it is asked again.
	askAgainAfter = time.Minute
)

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
}

func newAsker(given map[string]json.RawMessage, term *prompter, w io.Writer, disp display) *asker {
	return &asker{given: given, term: term, w: w, disp: disp,
		shown: map[string]bool{}, later: map[string]time.Time{}, refused: map[string]string{}}
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
func (a *asker) answerOpen(ctx context.Context, c *callClient, t *taskResult) (sent bool, err error) {
	for _, key := range a.order(t.InputRequests.keys) {
		if time.Now().Before(a.later[key]) {
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

// parseAnswers reads --answer KEY=JSON and --decline KEY into responses by key.
func parseAnswers(answers, declines []string) (map[string]json.RawMessage, error) {
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

// prompter asks on a terminal, or on whatever reader a test feeds lines into.
type prompter struct {
	r    io.Reader
	w    io.Writer
	echo bool // write each line read, when the terminal does not

	once  sync.Once
	lines chan string // closed at the end of the input
}

func newPrompter(r io.Reader, w io.Writer, echo bool) *prompter {
	return &prompter{r: r, w: w, echo: echo, lines: make(chan string)}
}

// readLine prints prompt and reads one line, until ctx is done; io.EOF at the end of the input.
func (p *prompter) readLine(ctx context.Context, prompt string) (string, error) {
	p.once.Do(func() {
		go func() {
			sc := bufio.NewScanner(p.r)
			for sc.Scan() {
				p.lines <- sc.Text()
			}
			close(p.lines)
		}()
	})
	fmt.Fprint(p.w, prompt)
	select {
	case <-ctx.Done():
		fmt.Fprintln(p.w)
		return "", ctx.Err()
	case line, ok := <-p.lines:
		if !ok {
			fmt.Fprintln(p.w)
			return "", io.EOF
		}
		if p.echo {
			fmt.Fprintln(p.w, line)
		}
		return strings.TrimSpace(line), nil
	}
}

// ask asks for a response to the question key with the schema: the form's fields one by one, or
// a refusal; nil when put off (canWait).
func (p *prompter) ask(ctx context.Context, key string, schema json.RawMessage, canWait bool) (json.RawMessage, error) {
	form, err := parseForm(schema)
	if err != nil {
		return nil, fmt.Errorf("the question %q: %w", key, err)
	}
	choices, letters := "(a)nswer, (d)ecline or dis(m)iss", "a, d or m"
	if canWait {
		choices, letters = "(a)nswer, (d)ecline, dis(m)iss or (l)ater", "a, d, m or l"
	}
	for {
		line, err := p.readLine(ctx, fmt.Sprintf("  %s: %s? [a] ", key, choices))
		if err != nil {
			return nil, err
		}
		switch strings.ToLower(line) {
		case "", "a", "answer":
			return p.fill(ctx, form)
		case "d", "decline":
			return json.RawMessage(`{"action":"decline"}`), nil
		case "m", "dismiss":
			return json.RawMessage(`{"action":"cancel"}`), nil
		case "l", "later":
			if canWait {
				fmt.Fprintf(p.w, "  asking again in %s if %q is still open\n", askAgainAfter, key)
				return nil, nil
			}
		}
		fmt.Fprintf(p.w, "  type %s\n", letters)
	}
}

// fill asks for each field of the form and returns the accepted response.
func (p *prompter) fill(ctx context.Context, form []field) (json.RawMessage, error) {
	var content bytes.Buffer
	content.WriteByte('{')
	for _, f := range form {
		v, err := p.value(ctx, f)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		if content.Len() > 1 {
			content.WriteByte(',')
		}
		name, _ := json.Marshal(f.name)
		content.Write(name)
		content.WriteByte(':')
		content.Write(v)
	}
	content.WriteByte('}')
	return json.Marshal(map[string]any{"action": "accept", "content": json.RawMessage(content.Bytes())})
}

// value asks for one field until the line reads as its type: nil for an optional field skipped.
func (p *prompter) value(ctx context.Context, f field) (json.RawMessage, error) {
	for {
		line, err := p.readLine(ctx, "  "+f.prompt())
		if err != nil {
			return nil, err
		}
		switch {
		case line == "" && f.def != nil:
			return f.def, nil
		case line == "" && !f.required:
			return nil, nil
		case line == "":
			fmt.Fprintln(p.w, "  required: type a value")
			continue
		}
		v, err := f.parse(line)
		if err == nil {
			return v, nil
		}
		fmt.Fprintf(p.w, "  %v\n", err)
	}
}

// field is one property of a form's schema.
type field struct {
	name, title, description, typ, format string
	choices                               []choice
	def                                   json.RawMessage
	required                              bool
}

type choice struct {
	value       json.RawMessage
	text, title string // the value as typed (a string unquoted); its title, if any
}

// parseForm reads the fields of a form's schema (type object, flat properties), in their order.
func parseForm(schema json.RawMessage) ([]field, error) {
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("the requested schema is not a JSON object: %w", err)
	}
	if len(s.Properties) == 0 {
		return nil, nil
	}
	names, err := objectKeys(s.Properties)
	if err != nil {
		return nil, fmt.Errorf("the requested schema's properties: %w", err)
	}
	var props map[string]struct {
		Type        string            `json:"type"`
		Title       string            `json:"title"`
		Description string            `json:"description"`
		Format      string            `json:"format"`
		Enum        []json.RawMessage `json:"enum"`
		OneOf       []struct {
			Const json.RawMessage `json:"const"`
			Title string          `json:"title"`
		} `json:"oneOf"`
		Default json.RawMessage `json:"default"`
	}
	if err := json.Unmarshal(s.Properties, &props); err != nil {
		return nil, fmt.Errorf("the requested schema's properties: %w", err)
	}
	form := make([]field, 0, len(names))
	for _, name := range names {
		pr := props[name]
		f := field{name: name, title: pr.Title, description: pr.Description, typ: pr.Type, format: pr.Format, def: pr.Default}
		for _, e := range pr.Enum {
			f.choices = append(f.choices, choice{value: e, text: valueText(e)})
		}
		for _, o := range pr.OneOf {
			if o.Const != nil {
				f.choices = append(f.choices, choice{value: o.Const, text: valueText(o.Const), title: o.Title})
			}
		}
		for _, r := range s.Required {
			f.required = f.required || r == name
		}
		form = append(form, f)
	}
	return form, nil
}

// valueText is a JSON value as one would type it: a string without its quotes.
func valueText(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// prompt reads like `Approve (Deploy this version now?) [y/n]: `.
func (f field) prompt() string {
	label := f.name
	if f.title != "" {
		label = f.title
	}
	if f.description != "" && f.description != label {
		label += " (" + f.description + ")"
	}
	var hints []string
	switch {
	case len(f.choices) > 0:
		var cs []string
		for i, c := range f.choices {
			t := c.text
			if c.title != "" {
				t = c.title
			}
			cs = append(cs, fmt.Sprintf("%d) %s", i+1, t))
		}
		hints = append(hints, strings.Join(cs, " "))
	case f.typ == "boolean":
		hints = append(hints, "y/n")
	case f.typ == "integer" || f.typ == "number":
		hints = append(hints, f.typ)
	case f.format != "":
		hints = append(hints, f.format)
	}
	if f.def != nil {
		hints = append(hints, "default "+valueText(f.def))
	} else if !f.required {
		hints = append(hints, "optional, Enter to skip")
	}
	if len(hints) == 0 {
		return label + ": "
	}
	return fmt.Sprintf("%s [%s]: ", label, strings.Join(hints, ", "))
}

// parse reads a line as the field's type; the server checks the rest of the schema.
func (f field) parse(s string) (json.RawMessage, error) {
	if len(f.choices) > 0 {
		if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(f.choices) {
			return f.choices[n-1].value, nil
		}
		for _, c := range f.choices {
			if s == c.text || (c.title != "" && s == c.title) {
				return c.value, nil
			}
		}
		return nil, fmt.Errorf("pick a number from 1 to %d", len(f.choices))
	}
	switch f.typ {
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true":
			return json.RawMessage("true"), nil
		case "n", "no", "false":
			return json.RawMessage("false"), nil
		}
		return nil, errors.New("answer y or n")
	case "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, errors.New("want a whole number, like 42")
		}
		return json.Marshal(n)
	case "number":
		n, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, errors.New("want a number, like 4.2")
		}
		return json.Marshal(n)
	case "string", "":
		return json.Marshal(s)
	}
	if !json.Valid([]byte(s)) {
		return nil, fmt.Errorf("want JSON (the field is of type %s)", f.typ)
	}
	return json.RawMessage(s), nil
}

// exampleContent is a form's content with a placeholder for each field, to show how --answer
// looks for it.
func exampleContent(schema json.RawMessage) string {
	form, _ := parseForm(schema)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range form {
		if i > 0 {
			b.WriteString(", ")
		}
		name, _ := json.Marshal(f.name)
		b.Write(name)
		b.WriteString(": ")
		switch {
		case len(f.choices) > 0:
			b.Write(f.choices[0].value)
		case f.typ == "boolean":
			b.WriteString("true")
		case f.typ == "integer" || f.typ == "number":
			b.WriteString("0")
		default:
			b.WriteString(`"..."`)
		}
	}
	b.WriteByte('}')
	return b.String()
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
