package mapping

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// served is a schema server that counts what it is asked: taskgate must ask it nothing.
func served(t *testing.T) (url string, hits *atomic.Int64) {
	hits = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"type":"object","required":["pw"],"properties":{"pw":{"const":"hunter2"}}}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, hits
}

// TestMappingSchemaRefs: a mapping's schemas refer within themselves and to JSON files beside the
// mapping file; a URL, an absolute path or a path out of its folder is refused with its position,
// and nothing is fetched, however the reference is spelled.
func TestMappingSchemaRefs(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "common.json"), []byte(`{"$defs":{"args":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}}`), 0o600)
	os.Mkdir(filepath.Join(dir, "my schemas"), 0o700)
	os.WriteFile(filepath.Join(dir, "my schemas", "more.json"), []byte(`{"type":"object","properties":{"m":{"$ref":"../common.json#/$defs/args"}}}`), 0o600)
	secret := filepath.Join(t.TempDir(), "secret.json")
	os.WriteFile(secret, []byte(`{"type":"object","required":["pw"],"properties":{"pw":{"const":"hunter2"}}}`), 0o600)
	url, hits := served(t)
	write := func(schema string) string {
		f := filepath.Join(dir, "tools.yaml")
		os.WriteFile(f, []byte(`engines:
  local: {alpha: {url: "http://x"}}
tools:
  - name: a
    description: d
    engine: local
    work: {name: A}
    inputSchema: `+schema+"\n"), 0o600)
		return f
	}

	f := write(`{type: object, properties: {x: {$ref: "common.json#/$defs/args"}, y: {$ref: "my%20schemas/more.json"}, z: {$ref: "#/$defs/z"}}, $defs: {z: {type: string}}}`)
	set, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := set.Tool("a")
	if err := tool.ValidateArguments(json.RawMessage(`{"x":{"n":1},"y":{"m":{"n":2}},"z":"s"}`)); err != nil {
		t.Fatalf("arguments that fit the referred schemas: %v", err)
	}
	if err := tool.ValidateArguments(json.RawMessage(`{"y":{"m":{"n":"two"}}}`)); err == nil || !strings.Contains(err.Error(), "y.m.n") {
		t.Fatalf("arguments that do not fit a schema two files away: %v", err)
	}

	for ref, want := range map[string]string{
		"file://" + secret:       `:8:56: tools[0].inputSchema.properties.x.$ref: "file://` + secret + `" is outside the mapping`,
		url + "/schema.json":     `:8:56: tools[0].inputSchema.properties.x.$ref: "` + url + `/schema.json" is outside the mapping`,
		secret:                   `:8:56: tools[0].inputSchema.properties.x.$ref: "` + secret + `" is outside the mapping`,
		"../secret.json":         `:8:56: tools[0].inputSchema.properties.x.$ref: "../secret.json" leaves the mapping's folder`,
		"%2e%2e/secret.json#/a":  `:8:56: tools[0].inputSchema.properties.x.$ref: "%2e%2e/secret.json#/a" leaves the mapping's folder`,
		"//" + url[7:] + "/s.js": `:8:56: tools[0].inputSchema.properties.x.$ref: "//` + url[7:] + `/s.js" is outside the mapping`,
	} {
		f := write(`{type: object, properties: {x: {$ref: "` + ref + `"}}}`)
		_, err := Load(f)
		if err == nil || !strings.Contains(err.Error(), f+want+` (refer within the schema ("#/$defs/name") or to a JSON file beside the mapping ("common.json#/$defs/name"); taskgate fetches nothing)`) {
			t.Errorf("$ref %s: %v", ref, err)
		}
	}
	// A base URI of its own makes a relative reference a URL: refused when loaded, not fetched.
	f = write(`{type: object, $id: "` + url + `/s.json", properties: {x: {$ref: "other.json"}}}`)
	if _, err := Load(f); err == nil || !strings.Contains(err.Error(), url+"/other.json is not beside the mapping file: taskgate loads schemas only by a path relative to it") {
		t.Errorf("a relative $ref under an $id URL: %v", err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the schema server was asked %d times", n)
	}
}

// TestAnswerSchemasLoadNothing: a question's schema from a running workflow must be whole in
// itself: a reference to a file, a URL, or a file beside anything is an invalid schema, and
// nothing is read.
func TestAnswerSchemasLoadNothing(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.json")
	os.WriteFile(secret, []byte(`{"type":"object","required":["pw"]}`), 0o600)
	url, hits := served(t)
	for _, schema := range []string{
		`{"type":"object","properties":{"pw":{"$ref":"file://` + secret + `"}}}`,
		`{"type":"object","properties":{"pw":{"$ref":"` + url + `/s.json"}}}`,
		`{"type":"object","properties":{"pw":{"$ref":"secret.json"}}}`,
		`{"type":"object","$ref":"` + secret + `"}`,
		`{"$schema":"file://` + secret + `","type":"object"}`,
		`{"$schema":"` + url + `/meta.json","type":"object"}`,
	} {
		_, err := CompileAnswerSchema(json.RawMessage(schema))
		if err == nil || !strings.Contains(err.Error(), "taskgate loads no other schema for it") {
			t.Errorf("%s: %v", schema, err)
		}
	}
	if _, err := CompileAnswerSchema(json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"boolean"}}}`)); err != nil {
		t.Fatalf("a reference within the schema: %v", err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the schema server was asked %d times", n)
	}
}
