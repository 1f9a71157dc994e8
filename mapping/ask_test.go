package mapping

import (
	"encoding/json"
	"testing"
)

func TestAsk(t *testing.T) {
	set, err := Parse("m.yaml", []byte(`
engines: {local: {alpha: {url: "http://x"}}}
tools:
  - name: pipeline
    description: d
    engine: local
    work: {name: A}
    inputSchema: {type: object, properties: {dataset: {type: string}}}
    ask:
      - key: confirm
        message: This run costs about $40. Run it?
        schema: {type: object, properties: {confirm: {type: boolean}, budget: {type: integer, maximum: 100}}, required: [confirm]}
`))
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := set.Tool("pipeline")
	if len(tool.Ask) != 1 || tool.Ask[0].Key != "confirm" || tool.Ask[0].Message != "This run costs about $40. Run it?" {
		t.Fatalf("ask = %+v", tool.Ask)
	}
	s := tool.Ask[0].Schema
	for content, want := range map[string]string{
		`{"confirm":true}`:              "",
		`{}`:                            `answer field "confirm" is required`,
		`{"confirm":"yes"}`:             `answer field "confirm": has type string, want boolean`,
		`{"confirm":true,"budget":500}`: `answer field "budget": must be at most 100`,
		`[1]`:                           `the answer: has type array, want object`,
	} {
		err := s.Check(json.RawMessage(content))
		if got := errString(err); got != want {
			t.Errorf("%s: %q, want %q", content, got, want)
		}
	}
	merged, err := WithAnswers(json.RawMessage(`{"dataset":"d1"}`), map[string]json.RawMessage{"confirm": json.RawMessage(`{"confirm":true}`)})
	if err != nil || string(merged) != `{"confirm":{"confirm":true},"dataset":"d1"}` {
		t.Fatalf("WithAnswers = %s, %v", merged, err)
	}
	if _, err := CompileAnswerSchema(json.RawMessage(`[]`)); err == nil {
		t.Fatal("an array compiled as an answer schema")
	}
	if _, err := Parse("m.yaml", []byte(`
engines: {local: {alpha: {url: "http://x"}}}
tools:
  - {name: a, description: d, engine: local, work: {name: A}, inputSchema: {type: object}, ask: [{key: "no spaces", message: m, schema: {type: object}}, {key: k, message: m}]}
`)); errString(err) != `m.yaml:4:104: tools[0].ask[0].key: "no spaces" is not a valid key (1 to 64 letters, digits, "_", "-" and ".": the key the answer joins the arguments under)
m.yaml:4:154: tools[0].ask[1]: missing required key "schema" (the answer's JSON Schema, like {type: object, properties: {confirm: {type: boolean}}})` {
		t.Fatalf("bad ask: %v", err)
	}
}
