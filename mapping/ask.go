package mapping

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/goccy/go-yaml/ast"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Question is one question a tool asks before it starts (the ask: list; MRTR on 2026-07-28,
// elicitation/create on a connection that carries it). An accepted answer joins the arguments
// under Key before the input transform.
type Question struct {
	Key, Message string
	Schema       *AnswerSchema
}

// AnswerSchema is a JSON Schema (type object) an answer must match: a tool's question's, or one
// a workflow declares at run time.
type AnswerSchema struct {
	// JSON is the schema as written.
	JSON json.RawMessage
	c    *compiled
}

// CompileAnswerSchema reads a JSON Schema of answers, such as a running workflow declares. It must
// be whole in itself: a reference to any other schema (a file, a URL) makes it invalid, and
// nothing is loaded.
func CompileAnswerSchema(raw json.RawMessage) (*AnswerSchema, error) {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("the answer schema is not a JSON object: %s", raw)
	}
	c, err := compile(raw, nil)
	if err != nil {
		return nil, fmt.Errorf("the answer schema is not a valid JSON Schema: %w", err)
	}
	return &AnswerSchema{JSON: raw, c: c}, nil
}

// Check checks an answer's content; the error is an *ArgumentError naming the field at fault.
func (s *AnswerSchema) Check(content json.RawMessage) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(orEmptyObject(content)))
	if err != nil {
		return &ArgumentError{Msg: "the answer is not valid JSON: " + err.Error()}
	}
	if err := s.c.Validate(v); err != nil {
		return s.c.explain(err, v, "the answer", "answer field")
	}
	return nil
}

var questionKeyRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

const questionKeyHint = `1 to 64 letters, digits, "_", "-" and ".": the key the answer joins the arguments under`

// ask reads a tool's ask: list.
func (d *doc) ask(e entry) []*Question {
	seq, ok := e.value.(*ast.SequenceNode)
	if !ok {
		d.errorf(e.value, "list them: ask: [{key: confirm, message: ..., schema: {type: object, ...}}]", "%s: must be a list, not %s", e.path, kind(e.value))
		return nil
	}
	var qs []*Question
	seen := map[string]bool{}
	for i, item := range seq.Values {
		path := fmt.Sprintf("%s[%d]", e.path, i)
		o, ok := d.object(item, path, defKeys("question"), nil)
		if !ok {
			continue
		}
		q := &Question{}
		key, ke, okKey := o.need("key", questionKeyHint, false)
		switch {
		case okKey && !questionKeyRE.MatchString(key):
			d.errorf(ke.value, questionKeyHint, "%s: %q is not a valid key", ke.path, key)
			okKey = false
		case okKey && seen[key]:
			d.errorf(ke.value, "give each question its own key", "%s: the key %q is asked already", ke.path, key)
			okKey = false
		}
		q.Message, _, _ = o.need("message", "the question as the user reads it", false)
		if se, present := o.m["schema"]; present {
			if raw, c := d.schema(se); c != nil {
				q.Schema = &AnswerSchema{JSON: raw, c: c}
			}
		} else {
			d.errorf(o.at, "the answer's JSON Schema, like {type: object, properties: {confirm: {type: boolean}}}", "%smissing required key %q", prefix(path), "schema")
		}
		if okKey && q.Message != "" && q.Schema != nil {
			seen[key], q.Key = true, key
			qs = append(qs, q)
		}
	}
	return qs
}
