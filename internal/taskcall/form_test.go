package taskcall

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestFieldTypes: the types and hints of form fields that the example workflows do not ask
// for, read from typed lines.
func TestFieldTypes(t *testing.T) {
	schema := json.RawMessage(`{"type": "object", "properties": {
		"env": {"type": "string", "enum": ["dev", "prod"]},
		"size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
		"count": {"type": "integer", "title": "Count", "default": 3},
		"ratio": {"type": "number", "description": "Share of traffic"},
		"email": {"type": "string", "format": "email"},
		"note": {"type": "string"}},
		"required": ["env", "size", "ratio", "email"]}`)
	lines := []string{"a", "staging", "2", "Large", "", "half", "0.25", "ops@example.com", ""}
	var screen bytes.Buffer
	p := newPrompter(strings.NewReader(strings.Join(lines, "\n")+"\n"), &screen, true)
	got, err := p.ask(t.Context(), "deploy", schema, true)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"action":"accept","content":{"env":"prod","size":"l","count":3,"ratio":0.25,"email":"ops@example.com"}}`
	if string(got) != want {
		t.Errorf("response %s, want %s", got, want)
	}
	const wantScreen = "  deploy: (a)nswer, (d)ecline, dis(m)iss or (l)ater? [a] a\n" +
		"  env [1) dev 2) prod]: staging\n  pick a number from 1 to 2\n  env [1) dev 2) prod]: 2\n" +
		"  size [1) Small 2) Large]: Large\n" +
		"  Count [integer, default 3]: \n" +
		"  ratio (Share of traffic) [number]: half\n  want a number, like 4.2\n  ratio (Share of traffic) [number]: 0.25\n" +
		"  email [email]: ops@example.com\n" +
		"  note [optional, Enter to skip]: \n"
	if screen.String() != wantScreen {
		t.Errorf("the prompts read\n%s\nwant\n%s", &screen, wantScreen)
	}
	if ex := exampleContent(schema); ex != `{"env": "dev", "size": "s", "count": 0, "ratio": 0, "email": "...", "note": "..."}` {
		t.Errorf("exampleContent = %s", ex)
	}
}
