package draft_test

import (
	"encoding/json"
	"flag"
	"io"
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

func TestSchemaWrite(t *testing.T) {
	const declared = `{"type": "object", "properties": {"sku": {"type": "string"}}}`
	for _, c := range []struct {
		name       string
		s          draft.Schema
		want, warn string
	}{
		{"declared", draft.Schema{Declared: json.RawMessage(declared), DeclaredBy: "the tag"},
			`    inputSchema: {"type":"object","properties":{"sku":{"type":"string"}}}` + "\n", ""},
		{"declared wins over inferred", draft.Schema{Declared: json.RawMessage(declared), DeclaredBy: "the tag", Infer: true, Samples: raws(`{"a":1}`)},
			`    inputSchema: {"type":"object","properties":{"sku":{"type":"string"}}}   # from the tag, which wins over the schema inferred from 1 input` + "\n", ""},
		{"inferred", draft.Schema{Infer: true, Samples: raws(`{"a":1}`, `{"a":2,"b":true}`)},
			`    inputSchema: {"properties":{"a":{"type":"integer"},"b":{"type":"boolean"}},"required":["a"],"type":"object"}   # inferred from the 2 latest inputs: review it` + "\n", ""},
		{"any object declared is no schema", draft.Schema{Declared: json.RawMessage(`{"type":"object","additionalProperties":true}`), DeclaredBy: "the handler", Infer: true, Samples: raws(`{"a":"x"}`)},
			`    inputSchema: {"properties":{"a":{"type":"string"}},"required":["a"],"type":"object"}   # inferred from the latest input: review it` + "\n", ""},
		{"inferred, not an object", draft.Schema{Infer: true, Samples: raws(`5`, `7`)},
			"    input: .input\n" + `    inputSchema: {"properties":{"input":{"type":"integer"}},"required":["input"],"type":"object"}   # inferred from the 2 latest inputs: review it` + "\n", ""},
		{"nothing", draft.Schema{Missing: "has no input schema", Hint: " (tag it)"},
			`    inputSchema: {"type":"object"}` + "\n", "taskgate: warning: sm has no input schema: the draft accepts any object (tag it)\n"},
		{"nothing to infer from", draft.Schema{Infer: true, Missing: "has no input schema"},
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
	err := draft.Schema{Infer: true, Samples: raws(`{"password":"hunter2"`)}.Write(&b, io.Discard, "sm")
	if err == nil || err.Error() != "sm: inferring the input schema: sample 1 of 1 is not JSON" {
		t.Errorf("Write of a sample that is not JSON: %v", err)
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

func TestInferFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
		err  string
	}{
		{nil, 0, ""},
		{[]string{"--infer", "20"}, 20, ""},
		{[]string{"--infer", "0"}, 0, `invalid value "0" for flag -infer: want a number of executions from 1 to 1000`},
		{[]string{"--infer", "1001"}, 0, `invalid value "1001" for flag -infer: want a number of executions from 1 to 1000`},
		{[]string{"--infer", "many"}, 0, `invalid value "many" for flag -infer: want a number of executions from 1 to 1000`},
	} {
		fs := flag.NewFlagSet("discover", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		n := draft.InferFlag(fs)
		err := fs.Parse(c.args)
		if (c.err == "" && (err != nil || *n != c.want)) || (c.err != "" && (err == nil || err.Error() != c.err)) {
			t.Errorf("%q: %d, %v; want %d, %s", c.args, *n, err, c.want, c.err)
		}
	}
}
