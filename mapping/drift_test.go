package mapping

import (
	"encoding/json"
	"strings"
	"testing"
)

func driftTool(t *testing.T, extra string) *Tool {
	t.Helper()
	set, err := Parse("m.yaml", []byte(`
engines: {local: {alpha: {url: "http://x"}}}
tools:
  - name: release
    description: d
    engine: local
    work: {name: A}
    inputSchema:
      type: object
      required: [version, region]
      additionalProperties: false
      properties:
        version: {type: string}
        region: {type: string}
        seconds: {type: number}
        mode: {enum: [fast, safe]}
        opts: {type: object, properties: {retries: {type: integer}}}
    ask: [{key: confirm, message: Go?, schema: {type: object}}]
`+extra))
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := set.Tool("release")
	return tool
}

func inputs(texts ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(texts))
	for i, s := range texts {
		out[i] = json.RawMessage(s)
	}
	return out
}

// TestInputDrift: each way recent inputs leave the schema is named by field, with how many of
// them do; an answer joined under a question's key is no drift.
func TestInputDrift(t *testing.T) {
	tool := driftTool(t, "")
	if err := tool.InputsComparable(); err != nil {
		t.Fatal(err)
	}
	if tool.InputSchemaAt != (Position{File: "m.yaml", Line: 8, Col: 5}) || tool.TargetAt != (Position{File: "m.yaml", Line: 7, Col: 5}) {
		t.Errorf("positions: inputSchema %+v, target %+v", tool.InputSchemaAt, tool.TargetAt)
	}
	got := tool.InputDrift(inputs(
		`{"version": "1.2", "seconds": "10", "confirm": {"ok": true}}`,
		`{"version": 3, "seconds": 10, "opts": {"retries": 1.5}, "debug": true, "mode": "slow"}`,
		`{"version": "1.3", "region": "eu", "debug": false}`,
		`{"version": "1.4", "region": "eu"}`,
		`[1]`,
		`{"version": `,
	))
	var lines []string
	for _, f := range got {
		lines = append(lines, f.String())
	}
	want := []string{
		`the input breaks the inputSchema in 1 of 6 recent inputs: it is not valid JSON`,
		`the input is object in the inputSchema, but 1 of 6 recent inputs send array`,
		`field "debug" is not allowed by the inputSchema (additionalProperties), but 2 of 6 recent inputs send it`,
		`field "mode" breaks the inputSchema in 1 of 6 recent inputs: must be one of "fast", "safe"`,
		`field "opts.retries" is integer in the inputSchema, but 1 of 6 recent inputs send number`,
		`field "region" is required by the inputSchema, but 2 of 6 recent inputs lack it`,
		`field "seconds" is number in the inputSchema, but 1 of 6 recent inputs send string`,
		`field "version" is string in the inputSchema, but 1 of 6 recent inputs send integer`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if fs := tool.InputDrift(inputs(`{"version": "1", "region": "eu"}`)); len(fs) != 0 {
		t.Errorf("an input that fits: %v", fs)
	}
	if fs := tool.InputDrift(nil); len(fs) != 0 {
		t.Errorf("no inputs: %v", fs)
	}
}

// TestInputsComparable: only inputs the arguments became unchanged are compared.
func TestInputsComparable(t *testing.T) {
	if err := driftTool(t, "    input: .\n").InputsComparable(); err != nil {
		t.Errorf("input: . = %v", err)
	}
	err := driftTool(t, "    input: '{v: .version}'\n").InputsComparable()
	if err == nil || err.Error() != "its input: program turns the arguments into another engine input, so what runs is not what the inputSchema describes" {
		t.Errorf("input: program = %v", err)
	}
	if err := (&Tool{}).InputsComparable(); err == nil {
		t.Error("a tool with no compiled schema is comparable")
	}
}
