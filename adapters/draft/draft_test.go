package draft_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/taskgate/taskgate/adapters/draft"
)

func raws(texts ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(texts))
	for i, t := range texts {
		out[i] = json.RawMessage(t)
	}
	return out
}

// inferred is what --infer 20 asks.
var inferred = draft.Inference{Executions: 20}

func TestSchemaWrite(t *testing.T) {
	const declared = `{"type": "object", "properties": {"sku": {"type": "string"}}}`
	for _, c := range []struct {
		name       string
		s          draft.Schema
		want, warn string
	}{
		{"declared", draft.Schema{Declared: json.RawMessage(declared), DeclaredBy: "the tag"},
			`    inputSchema: {"type":"object","properties":{"sku":{"type":"string"}}}` + "\n", ""},
		{"declared wins over inferred", draft.Schema{Declared: json.RawMessage(declared), DeclaredBy: "the tag", Inference: inferred, Samples: raws(`{"a":1}`)},
			`    inputSchema: {"type":"object","properties":{"sku":{"type":"string"}}}   # from the tag, which wins over the schema inferred from 1 input` + "\n", ""},
		{"inferred", draft.Schema{Inference: inferred, Samples: raws(`{"a":1}`, `{"a":2,"b":true}`)},
			`    inputSchema: {"properties":{"a":{"type":"integer"},"b":{"type":"boolean"}},"required":["a"],"type":"object"}   # inferred from the 2 latest inputs: review it` + "\n", ""},
		{"any object declared is no schema", draft.Schema{Declared: json.RawMessage(`{"type":"object","additionalProperties":true}`), DeclaredBy: "the handler", Inference: inferred, Samples: raws(`{"a":"x"}`)},
			`    inputSchema: {"properties":{"a":{"type":"string"}},"required":["a"],"type":"object"}   # inferred from the latest input: review it` + "\n", ""},
		{"inferred, not an object", draft.Schema{Inference: inferred, Samples: raws(`5`, `7`)},
			"    input: .input\n" + `    inputSchema: {"properties":{"input":{"type":"integer"}},"required":["input"],"type":"object"}   # inferred from the 2 latest inputs: review it` + "\n", ""},
		{"nothing", draft.Schema{Missing: "has no input schema", Hint: " (tag it)"},
			`    inputSchema: {"type":"object"}` + "\n", "taskgate: warning: sm has no input schema: the draft accepts any object (tag it)\n"},
		{"nothing to infer from", draft.Schema{Inference: inferred, Missing: "has no input schema"},
			`    inputSchema: {"type":"object"}` + "\n", "taskgate: warning: sm has no input schema and no execution to infer one from: the draft accepts any object\n"},
	} {
		var b, warn strings.Builder
		if err := c.s.Write(&b, &warn, "sm"); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if b.String() != c.want || warn.String() != c.warn {
			t.Errorf("%s:\n got %q, warnings %q\nwant %q, warnings %q", c.name, b.String(), warn.String(), c.want, c.warn)
		}
	}
	var b strings.Builder
	err := draft.Schema{Inference: inferred, Samples: raws(`{"password":"hunter2"`)}.Write(&b, io.Discard, "sm")
	if err == nil || err.Error() != "sm: inferring the input schema: sample 1 of 1 is not JSON" {
		t.Errorf("Write of a sample that is not JSON: %v", err)
	}
}

// TestSchemaWriteLeavesOpen: the draft names each place its inferred schema leaves open, and why,
// on a line of its own after the schema; with --enums, plain values get their enum, and secrets
// none.
func TestSchemaWriteLeavesOpen(t *testing.T) {
	var runs []string
	for i := range 12 {
		runs = append(runs, fmt.Sprintf(`{"apiToken":"tgk_live_8fQ2mZx7LpR4vN9sK3dW","dbPassword":"hunter2","region":%q,"hooks":{"url":%q}}`,
			[]string{"eu-west-1", "us-east-1"}[i%2], "https://hooks.example.com/"+strings.Repeat("x", 20)))
	}
	const schema = `    inputSchema: {"properties":{"apiToken":{"type":"string"},"dbPassword":{"type":"string"},"hooks":{"properties":{"url":{"type":"string"}},"required":["url"],"type":"object"},"region":{%s"type":"string"}},"required":["apiToken","dbPassword","hooks","region"],"type":"object"}   # inferred from the 12 latest inputs: review it` + "\n"
	secrets := "    # input.apiToken: no enum: its name reads as a secret\n" +
		"    # input.dbPassword: no enum: its name reads as a secret\n" +
		"    # input.hooks.url: no enum: a value is longer than 32 characters\n"
	for _, c := range []struct {
		enums bool
		want  string
	}{
		{false, fmt.Sprintf(schema, "") + secrets + "    # input.region: no enum: pass --enums to draft enums from samples\n"},
		{true, fmt.Sprintf(schema, `"enum":["eu-west-1","us-east-1"],`) + secrets},
	} {
		var b, warn strings.Builder
		s := draft.Schema{Inference: draft.Inference{Executions: 20, Enums: c.enums}, Samples: raws(runs...)}
		if err := s.Write(&b, &warn, "sm"); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want || warn.Len() > 0 {
			t.Errorf("--enums %v:\n got %s warnings %q\nwant %s", c.enums, b.String(), warn.String(), c.want)
		}
	}

	var wrapped strings.Builder
	if err := (draft.Schema{Inference: inferred, Samples: raws(slices.Repeat([]string{`"a"`}, 10)...)}).Write(&wrapped, io.Discard, "sm"); err != nil {
		t.Fatal(err)
	}
	if want := "    # input: no enum: pass --enums to draft enums from samples\n"; !strings.HasSuffix(wrapped.String(), want) {
		t.Errorf("a value that is not an object:\n got %s\nwant it to end with %s", wrapped.String(), want)
	}
}

func TestSnakeName(t *testing.T) {
	taken := map[string]bool{}
	for _, c := range []struct{ in, want string }{ // in order: a name taken before gets a suffix
		{"OrderService", "order_service"}, {"order-service", "order_service_2"}, {"HTTPThing2", "httpthing2"}, {"!!", "tool"},
	} {
		if got := draft.SnakeName(c.in, taken); got != c.want {
			t.Errorf("SnakeName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestInferFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want draft.Inference
		err  string
	}{
		{nil, draft.Inference{}, ""},
		{[]string{"--infer", "20"}, draft.Inference{Executions: 20}, ""},
		{[]string{"--infer", "20", "--enums"}, draft.Inference{Executions: 20, Enums: true}, ""},
		{[]string{"--infer", "0"}, draft.Inference{}, `invalid value "0" for flag -infer: want a number of executions from 1 to 1000`},
		{[]string{"--infer", "1001"}, draft.Inference{}, `invalid value "1001" for flag -infer: want a number of executions from 1 to 1000`},
		{[]string{"--infer", "many"}, draft.Inference{}, `invalid value "many" for flag -infer: want a number of executions from 1 to 1000`},
	} {
		fs := flag.NewFlagSet("discover", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		i := draft.InferFlags(fs)
		err := fs.Parse(c.args)
		if (c.err == "" && (err != nil || *i != c.want)) || (c.err != "" && (err == nil || err.Error() != c.err)) {
			t.Errorf("%q: %+v, %v; want %+v, %s", c.args, *i, err, c.want, c.err)
		}
	}
}
