package mapping

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/google/jsonschema-go/jsonschema"
)

// formatSchema is schema.json, resolved.
func formatSchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	b, err := os.ReadFile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// asJSON reads a YAML file as the JSON value that editors check against schema.json.
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

// TestFilesMatchSchema checks every example mapping file and every good test file against
// schema.json: what the loader accepts, editors must accept too.
func TestFilesMatchSchema(t *testing.T) {
	rs := formatSchema(t)
	var files []string
	for _, pattern := range []string{"../examples/*/*.yaml", "../examples/*/*.yml", "testdata/good/*.y*ml"} {
		matches, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, matches...)
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
			t.Errorf("%s does not match schema.json: %v", file, err)
		}
	}
}

// TestSchemaRejects checks that schema.json flags the mistakes an editor should underline.
func TestSchemaRejects(t *testing.T) {
	rs := formatSchema(t)
	for _, src := range []string{
		"versoin: 1\n",
		"version: 2\n",
		"engines: {Local: {temporal: {address: 'a:1'}}}\n",
		"engines: {a: {temporal: {address: 'a:1'}, stepfunctions: {region: us-east-1}}}\n",
		"engines: {a: {temporal: {adress: 'a:1'}}}\n",
		"engines: {a: {temporal: {address: localhost}}}\n",
		"engines: {a: {temporal: {address: 'a:1', tls: {certFile: c.pem}}}}\n",
		"engines: {a: {stepfunctions: {region: us-east-1, roleArn: 'arn:x'}}}\n",
		"tools: [{name: a, description: d, engine: e, inputSchema: {type: object}, poll_interval: 1s}]\n",
		"tools: [{name: a b, description: d, engine: e, inputSchema: {type: object}}]\n",
		"tools: [{description: d, engine: e, inputSchema: {type: object}}]\n",
		"tools: [{name: a, description: d, engine: e, inputSchema: {type: array}}]\n",
		"tools: [{name: a, description: d, engine: e, inputSchema: {type: object}, ttl: 1d}]\n",
		"tools: [{name: a, description: d, engine: e, inputSchema: {type: object}, taskSupport: later}]\n",
		"tools: [{name: a, description: d, engine: e, inputSchema: {type: object}, workflow: {type: A, taskQueue: q}, stateMachine: 'arn:aws:states:us-east-1:123456789012:stateMachine:a'}]\n",
		"tools: [{name: a, description: d, engine: e, inputSchema: {type: object}, stateMachine: 'arn:aws:states:us-east-1:123456789012:execution:a:b'}]\n",
		"tools: [{name: a, description: d, engine: e, inputSchema: {type: object}, workflow: {type: A}}]\n",
	} {
		if err := rs.Validate(asJSON(t, []byte(src))); err == nil {
			t.Errorf("schema.json accepts %s", src)
		}
	}
}

// TestSchemaKeysMatchLoader keeps schema.json and the loader from drifting apart: the closed
// objects of schema.json (additionalProperties: false) are the root ("file") and its $defs, and
// each declares exactly the keys that the loader accepts for that kind of mapping.
func TestSchemaKeysMatchLoader(t *testing.T) {
	b, err := os.ReadFile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	closed := map[string]map[string]any{"file": root}
	for name, def := range root["$defs"].(map[string]any) {
		if d := def.(map[string]any); d["additionalProperties"] == false {
			closed[name] = d
		}
	}
	for name, obj := range closed {
		props, _ := obj["properties"].(map[string]any)
		var declared []string
		for key, p := range props {
			declared = append(declared, key)
			if desc, _ := p.(map[string]any)["description"].(string); desc == "" {
				t.Errorf("schema.json: %s.%s has no description", name, key)
			}
		}
		accepted, ok := objectKeys[name]
		if !ok {
			t.Errorf("schema.json declares %q, which the loader does not read", name)
			continue
		}
		slices.Sort(declared)
		accepted = slices.Sorted(slices.Values(accepted))
		if !slices.Equal(declared, accepted) {
			t.Errorf("%s: schema.json declares %v, the loader accepts %v", name, declared, accepted)
		}
	}
	for name := range objectKeys {
		if closed[name] == nil {
			t.Errorf("the loader reads %q mappings, which schema.json does not declare as a closed object", name)
		}
	}
}
