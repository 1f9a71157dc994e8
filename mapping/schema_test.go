package mapping

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// resolved is Schema(), with this package's test drivers, ready to validate.
func resolved(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem:///mapping.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///mapping.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// asJSON reads a YAML file as the JSON value that editors check against the schema.
func asJSON(t *testing.T, src []byte) any {
	t.Helper()
	j, err := yaml.YAMLToJSON(src)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestGoodFilesMatchSchema: what the loader accepts, editors must accept too.
func TestGoodFilesMatchSchema(t *testing.T) {
	rs := resolved(t)
	files, err := filepath.Glob("testdata/good/*.y*ml")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, "testdata/good/tools.yaml") {
		t.Fatalf("the test files are missing: %v", files)
	}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := rs.Validate(asJSON(t, src)); err != nil {
			t.Errorf("%s does not match the schema: %v", file, err)
		}
	}
}

// TestSchemaRejects checks that the schema flags the mistakes an editor should underline,
// including those in the drivers' parts.
func TestSchemaRejects(t *testing.T) {
	rs := resolved(t)
	for _, src := range []string{
		"versoin: 1\n",
		"version: 2\n",
		"engines: {Local: {alpha: {url: 'http://x'}}}\n",
		"engines: {a: {}}\n",
		"engines: {a: {alfa: {url: 'http://x'}}}\n",
		"engines: {a: {alpha: {url: 'http://x'}, beta: {}}}\n",
		"engines: {a: {alpha: {url: 'http://x', urls: y}}}\n",
		"engines: {a: {alpha: {url: 'http://x', wait: 1d}}}\n",
		"tools: [{name: a, description: d, engine: e, inputSchema: {type: object}, work: {name: A}, poll_interval: 1s}]\n",
		"tools: [{name: a b, description: d, engine: e, inputSchema: {type: object}, work: {name: A}}]\n",
		"tools: [{description: d, engine: e, inputSchema: {type: object}, work: {name: A}}]\n",
		"tools: [{name: a, description: d, engine: e, inputSchema: {type: array}, work: {name: A}}]\n",
		"tools: [{name: a, description: d, engine: e, inputSchema: {type: object}, work: {name: A}, ttl: 1d}]\n",
		"tools: [{name: a, description: d, engine: e, inputSchema: {type: object}, work: {name: A}, taskSupport: later}]\n",
		"tools: [{name: a, description: d, engine: e, inputSchema: {type: object}}]\n",
		"tools: [{name: a, description: d, engine: e, inputSchema: {type: object}, work: {name: A}, queue: Q}]\n",
		"tools: [{name: a, description: d, engine: e, inputSchema: {type: object}, work: {timeout: 1s}}]\n",
		"tools: [{name: a, description: d, engine: e, inputSchema: {type: object}, queue: ''}]\n",
	} {
		if err := rs.Validate(asJSON(t, []byte(src))); err == nil {
			t.Errorf("the schema accepts %s", src)
		}
	}
}

// TestFormatSchemaDescribesEveryKey: every key of the file and of a tool has a description.
func TestFormatSchemaDescribesEveryKey(t *testing.T) {
	for name, obj := range map[string]map[string]any{"file": format(), "tool": jsonObject(format(), "$defs", "tool")} {
		for key, p := range jsonObject(obj, "properties") {
			if desc, _ := p.(map[string]any)["description"].(string); desc == "" {
				t.Errorf("format.schema.json: %s.%s has no description", name, key)
			}
		}
	}
}
