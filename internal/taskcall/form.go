package taskcall

// Forms on a terminal: a question's requested schema (an object of flat fields) is asked one
// field at a time, each line read as its field's type; the server checks the rest of the schema.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
)

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
