package builtin_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"

	_ "github.com/taskgate/taskgate/adapters/builtin"
	"github.com/taskgate/taskgate/mapping"
)

var update = flag.Bool("update", false, "rewrite mapping/schema.json from the drivers")

const schemaFile = "../../mapping/schema.json"

// TestSchemaFile keeps mapping/schema.json, which editors read, equal to what the drivers declare.
// Run `go test ./adapters/builtin -update` after changing a driver's schema.
func TestSchemaFile(t *testing.T) {
	want := mapping.Schema()
	if *update {
		if err := os.WriteFile(schemaFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what the drivers declare: run go test ./adapters/builtin -update", schemaFile)
	}
}

func resolved(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(mapping.Schema()))
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

// TestExamplesMatchSchema: the example mapping files load, and editors accept them.
func TestExamplesMatchSchema(t *testing.T) {
	rs := resolved(t)
	files, err := filepath.Glob("../../examples/*/*.y*ml")
	if err != nil || len(files) < 2 {
		t.Fatalf("example mapping files: %v, %v", files, err)
	}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := rs.Validate(asJSON(t, src)); err != nil {
			t.Errorf("%s does not match the schema: %v", file, err)
		}
		if _, err := mapping.Parse(file, src); err != nil {
			t.Errorf("%s does not load: %v", file, err)
		}
	}
}

// TestSchemaRejects checks that the schema flags the mistakes in engine blocks and targets that
// an editor should underline.
func TestSchemaRejects(t *testing.T) {
	rs := resolved(t)
	const tool = "{name: a, description: d, engine: e, inputSchema: {type: object}, "
	for _, src := range []string{
		"engines: {a: {temporal: {address: 'a:1'}, stepfunctions: {region: us-east-1}}}\n",
		"engines: {a: {temporal: {adress: 'a:1'}}}\n",
		"engines: {a: {temporal: {address: localhost}}}\n",
		"engines: {a: {temporal: {address: 'a:1', tls: {certFile: c.pem}}}}\n",
		"engines: {a: {temporal: {apiKeyEnv: 'sk-live.abc'}}}\n",
		"engines: {a: {stepfunctions: {region: useast1}}}\n",
		"engines: {a: {stepfunctions: {region: us-east-1, roleArn: 'arn:x'}}}\n",
		"engines: {a: {stepfunctions: {endpoint: '127.0.0.1:8083'}}}\n",
		"tools: [" + tool + "workflow: {type: A, taskQueue: q}, stateMachine: 'arn:aws:states:us-east-1:123456789012:stateMachine:a'}]\n",
		"tools: [" + tool + "stateMachine: 'arn:aws:states:us-east-1:123456789012:execution:a:b'}]\n",
		"tools: [" + tool + "workflow: {type: A}}]\n",
		"tools: [" + tool + "workflow: {type: A, taskQueue: q, executionTimeout: 1d}}]\n",
		"engines: {a: {restate: {ingress: '127.0.0.1:8080'}}}\n",
		"engines: {a: {restate: {authTokenEnv: 'key_abc.123'}}}\n",
		"tools: [" + tool + "invoke: {service: A}}]\n",
		"tools: [" + tool + "invoke: {service: A, handler: run, cancel: abort}}]\n",
		"tools: [" + tool + "}]\n",
	} {
		if err := rs.Validate(asJSON(t, []byte(src))); err == nil {
			t.Errorf("the schema accepts %s", src)
		}
	}
}
