package mapping

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/itchyny/gojq"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// transformTimeout bounds one run of a jq program, so that a program that loops cannot hold
// a tool call forever.
var transformTimeout = time.Second

// maxTransformOutput bounds what a jq program may yield: more than any engine input or tool result
// is meant to carry.
const maxTransformOutput = 8 << 20

const jqHint = "see https://jqlang.org/manual/"

// transform compiles the jq program of an input or result key.
func (d *doc) transform(e entry) *Transform {
	src, ok := d.str(e.value, e.path)
	if !ok {
		return nil
	}
	if strings.TrimSpace(src) == "" {
		d.errorf(e.value, "write a jq program like {seconds, text}, or remove the key", "%s: is empty", e.path)
		return nil
	}
	t, err := compileTransform(src)
	if err != nil {
		d.errorf(e.value, jqHint, "%s: invalid jq program: %v", e.path, err)
	}
	return t
}

func compileTransform(src string) (*Transform, error) {
	q, err := gojq.Parse(src)
	if err != nil {
		return nil, err
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, err
	}
	return &Transform{Source: src, code: code}, nil
}

// EngineInput turns tool arguments into the engine input: through the Input program, or
// unchanged. Absent or null arguments are {}.
func (t *Tool) EngineInput(args json.RawMessage) (json.RawMessage, error) {
	args = orEmptyObject(args)
	if t.Input == nil {
		return args, nil
	}
	out, err := t.Input.run(args)
	if err != nil {
		return nil, fmt.Errorf("tool %q: input transform: %w", t.Name, err)
	}
	return out, nil
}

// StructuredResult turns the engine output into the tool's structured result: through the
// Result program, or unchanged; then checked against the outputSchema, when the tool has one. An
// absent output is null.
func (t *Tool) StructuredResult(output json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(output)) == 0 {
		output = json.RawMessage("null")
	}
	out := output
	if t.Result != nil {
		var err error
		if out, err = t.Result.run(output); err != nil {
			return nil, fmt.Errorf("tool %q: result transform: %w", t.Name, err)
		}
	}
	if err := t.checkResult(out); err != nil {
		return nil, fmt.Errorf("tool %q: the result does not fit its outputSchema: %w", t.Name, err)
	}
	return out, nil
}

// checkResult says whether a structured result fits the tool's outputSchema, when it has one: the
// error names the field at fault.
func (t *Tool) checkResult(structured json.RawMessage) error {
	if t.outputSchema == nil {
		return nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(structured))
	if err != nil {
		return err
	}
	if err := t.outputSchema.Validate(v); err != nil {
		return t.outputSchema.explain(err, v, "result", "result field")
	}
	return nil
}

// ResultText returns the text content of a structured result: what the Text program yields (a
// string as it is, any other value as its JSON), or without one the result's JSON.
func (t *Tool) ResultText(structured json.RawMessage) (string, error) {
	if t.Text == nil {
		return string(structured), nil
	}
	out, err := t.Text.run(structured)
	if err != nil {
		return "", fmt.Errorf("tool %q: text transform: %w", t.Name, err)
	}
	var s string
	if json.Unmarshal(out, &s) == nil {
		return s, nil
	}
	return string(out), nil
}

// WithAnswers returns the arguments with each answer joined under its key: what EngineInput then
// reads.
func WithAnswers(args json.RawMessage, answers map[string]json.RawMessage) (json.RawMessage, error) {
	if len(answers) == 0 {
		return args, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(orEmptyObject(args), &m); err != nil {
		return nil, fmt.Errorf("arguments must be a JSON object: %w", err)
	}
	for k, v := range answers {
		m[k] = v
	}
	return json.Marshal(m)
}

func orEmptyObject(args json.RawMessage) json.RawMessage {
	if s := bytes.TrimSpace(args); len(s) == 0 || bytes.Equal(s, []byte("null")) {
		return json.RawMessage("{}")
	}
	return args
}

// run applies the program to one JSON value; it must yield exactly one value.
func (t *Transform) run(input json.RawMessage) (json.RawMessage, error) {
	if !json.Valid(input) {
		return nil, errors.New("the value to transform is not valid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber() // keeps large integers exact
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), transformTimeout)
	defer cancel()
	iter := t.code.RunWithContext(ctx, v)
	out, ok := iter.Next()
	if !ok {
		return nil, errors.New("the jq program yielded no value; it must yield exactly one")
	}
	if err, ok := out.(error); ok {
		return nil, jqRunError(err)
	}
	if next, more := iter.Next(); more {
		if err, ok := next.(error); ok {
			return nil, jqRunError(err)
		}
		return nil, errors.New("the jq program yielded more than one value; it must yield exactly one (collect them with [...])")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("the jq program yielded a value that is not JSON: %w", err)
	}
	result := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if len(result) > maxTransformOutput {
		return nil, fmt.Errorf("the jq program yielded %d bytes, more than the limit of %d", len(result), maxTransformOutput)
	}
	return result, nil
}

func jqRunError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("the jq program did not finish within %s", transformTimeout)
	}
	return fmt.Errorf("the jq program failed: %w", err)
}
