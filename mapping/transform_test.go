package mapping

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// transformTool is a tool whose input and result are both the jq program prog.
func transformTool(t *testing.T, prog string) *Tool {
	t.Helper()
	src := fmt.Sprintf(`
engines: {local: {alpha: {url: "http://x"}}}
tools:
  - name: jq
    description: d
    engine: local
    work: {name: A}
    inputSchema: {type: object}
    input: %q
    result: %q
`, prog, prog)
	set, err := Parse("jq.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := set.Tool("jq")
	return tool
}

func TestTransforms(t *testing.T) {
	defer func(d time.Duration) { transformTimeout = d }(transformTimeout)
	transformTimeout = 50 * time.Millisecond

	const in = `{"seconds":3,"text":"hi <&>","big":12345678901234567890,"list":[1,2]}`
	for _, c := range []struct{ prog, in, out, err string }{
		{".", in, `{"big":12345678901234567890,"list":[1,2],"seconds":3,"text":"hi <&>"}`, ""},
		{"{seconds, text}", in, `{"seconds":3,"text":"hi <&>"}`, ""},
		{".big + 1", in, `12345678901234567891`, ""},
		{"{n: (.seconds * 1000)}", in, `{"n":3000}`, ""},
		{".missing", in, `null`, ""},
		{"[.list[] * 2]", in, `[2,4]`, ""},
		{"$ENV", in, `{}`, ""}, // the environment stays out of reach
		{"empty", in, "", "the jq program yielded no value; it must yield exactly one"},
		{".list[]", in, "", "the jq program yielded more than one value; it must yield exactly one (collect them with [...])"},
		{"error(\"boom\")", in, "", "the jq program failed: error: boom"},
		{".seconds, error(\"late\")", in, "", "the jq program failed: error: late"},
		{".text.a", in, "", "the jq program failed: expected an object but got: string (\"hi <&>\")"},
		{"nan", in, "", "the jq program yielded a value that is not JSON: json: unsupported value: NaN"},
		{"reduce range(1e18) as $i (0; . + 1)", in, "", "the jq program did not finish within 50ms"},
		{".", `{"a":`, "", "the value to transform is not valid JSON"},
	} {
		tool := transformTool(t, c.prog)
		out, err := tool.EngineInput(json.RawMessage(c.in))
		if got, want := errString(err), prefixed(`tool "jq": input transform: `, c.err); got != want || string(out) != c.out {
			t.Errorf("input %s on %s = %s, %q; want %s, %q", c.prog, c.in, out, got, c.out, want)
		}
		out, err = tool.StructuredResult(json.RawMessage(c.in))
		if got, want := errString(err), prefixed(`tool "jq": result transform: `, c.err); got != want || string(out) != c.out {
			t.Errorf("result %s on %s = %s, %q; want %s, %q", c.prog, c.in, out, got, c.out, want)
		}
	}
}

func TestTransformOutputIsBounded(t *testing.T) {
	tool := transformTool(t, `"abcdefghi" * 1000000`)
	_, err := tool.StructuredResult(json.RawMessage(`{}`))
	if want := `tool "jq": result transform: the jq program yielded 9000002 bytes, more than the limit of 8388608`; errString(err) != want {
		t.Fatalf("%v, want %s", err, want)
	}
}

func prefixed(prefix, msg string) string {
	if msg == "" {
		return ""
	}
	return prefix + msg
}

func TestTransformsOfNothing(t *testing.T) {
	tool := transformTool(t, ".")
	for _, args := range []string{"", " ", "null"} {
		if out, err := tool.EngineInput(json.RawMessage(args)); err != nil || string(out) != "{}" {
			t.Errorf("EngineInput(%q) = %s, %v; want {}", args, out, err)
		}
	}
	if out, err := tool.StructuredResult(nil); err != nil || string(out) != "null" {
		t.Errorf("StructuredResult(nil) = %s, %v; want null", out, err)
	}
}

func TestPassThrough(t *testing.T) {
	tool := &Tool{Name: "plain"}
	for _, c := range []struct{ in, input, result string }{
		{``, `{}`, `null`},
		{`null`, `{}`, `null`},
		{`{"a": [1, 2]}`, `{"a": [1, 2]}`, `{"a": [1, 2]}`},
	} {
		if out, err := tool.EngineInput(json.RawMessage(c.in)); err != nil || string(out) != c.input {
			t.Errorf("EngineInput(%q) = %s, %v; want %s", c.in, out, err, c.input)
		}
		if out, err := tool.StructuredResult(json.RawMessage(c.in)); err != nil || string(out) != c.result {
			t.Errorf("StructuredResult(%q) = %s, %v; want %s", c.in, out, err, c.result)
		}
	}
}

func TestResultText(t *testing.T) {
	plain := transformTool(t, ".")
	plain.Text = nil
	if got, err := plain.ResultText(json.RawMessage(`{"a":1}`)); err != nil || got != `{"a":1}` {
		t.Errorf("without text: %q, %v", got, err)
	}
	for _, c := range []struct{ prog, in, want, err string }{
		{`"Hello, \(.name)!"`, `{"name":"Alice"}`, "Hello, Alice!", ""},
		{`.count`, `{"count":3}`, "3", ""},
		{`{n: .name}`, `{"name":"Bob"}`, `{"n":"Bob"}`, ""},
		{`.name | error`, `{"name":"boom"}`, "", `tool "jq": text transform: the jq program failed: error: boom`},
	} {
		src := fmt.Sprintf(`
engines: {local: {alpha: {url: "http://x"}}}
tools:
  - {name: jq, description: d, engine: local, work: {name: A}, inputSchema: {type: object}, text: %q}
`, c.prog)
		set, err := Parse("jq.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		tool, _ := set.Tool("jq")
		got, err := tool.ResultText(json.RawMessage(c.in))
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: error %v, want %s", c.prog, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s on %s: %q, %v; want %q", c.prog, c.in, got, err, c.want)
		}
	}
}
