package schemainfer_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/taskgate/taskgate/internal/schemainfer"
)

func samples(texts ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(texts))
	for i, t := range texts {
		out[i] = json.RawMessage(t)
	}
	return out
}

// repeat returns text n times.
func repeat(n int, text string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = text
	}
	return out
}

func TestInfer(t *testing.T) {
	tests := []struct {
		name    string
		samples []string
		want    string
	}{
		{"one object", []string{`{"sku":"A-1","count":2,"gift":false}`},
			`{"properties":{"count":{"type":"integer"},"gift":{"type":"boolean"},"sku":{"type":"string"}},"required":["count","gift","sku"],"type":"object"}`},
		{"a property some lack is not required", []string{`{"a":1,"b":"x"}`, `{"a":2}`},
			`{"properties":{"a":{"type":"integer"},"b":{"type":"string"}},"required":["a"],"type":"object"}`},
		{"integer and number make a number", []string{`{"n":1}`, `{"n":1.5}`, `{"n":2e3}`},
			`{"properties":{"n":{"type":"number"}},"required":["n"],"type":"object"}`},
		{"types that differ make a list, null among them", []string{`{"v":"x"}`, `{"v":null}`, `{"v":3}`},
			`{"properties":{"v":{"type":["integer","null","string"]}},"required":["v"],"type":"object"}`},
		{"nested objects", []string{`{"to":{"city":"Oslo","zip":"0150"}}`, `{"to":{"city":"Bergen"}}`},
			`{"properties":{"to":{"properties":{"city":{"type":"string"},"zip":{"type":"string"}},"required":["city"],"type":"object"}},"required":["to"],"type":"object"}`},
		{"array items merge over every sample", []string{`{"xs":[1,2]}`, `{"xs":[{"id":"a"},3.5]}`, `{"xs":[]}`},
			`{"properties":{"xs":{"items":{"properties":{"id":{"type":"string"}},"required":["id"],"type":["number","object"]},"type":"array"}},"required":["xs"],"type":"object"}`},
		{"an array never seen with items has no items", []string{`{"xs":[]}`},
			`{"properties":{"xs":{"type":"array"}},"required":["xs"],"type":"object"}`},
		{"not an object at the top", []string{`"a"`, `7`},
			`{"type":["integer","string"]}`},
		{"enum: ten samples, two values, each twice", append(repeat(8, `{"env":"prod"}`), `{"env":"dev"}`, `{"env":"dev"}`),
			`{"properties":{"env":{"enum":["dev","prod"],"type":"string"}},"required":["env"],"type":"object"}`},
		{"no enum under ten samples", append(repeat(7, `{"env":"prod"}`), `{"env":"dev"}`, `{"env":"dev"}`),
			`{"properties":{"env":{"type":"string"}},"required":["env"],"type":"object"}`},
		{"no enum when a value is seen once", append(repeat(9, `{"env":"prod"}`), `{"env":"dev"}`),
			`{"properties":{"env":{"type":"string"}},"required":["env"],"type":"object"}`},
		{"no enum over five values", []string{`{"c":"a"}`, `{"c":"a"}`, `{"c":"b"}`, `{"c":"b"}`, `{"c":"c"}`, `{"c":"c"}`,
			`{"c":"d"}`, `{"c":"d"}`, `{"c":"e"}`, `{"c":"e"}`, `{"c":"f"}`, `{"c":"f"}`},
			`{"properties":{"c":{"type":"string"}},"required":["c"],"type":"object"}`},
		{"no enum when other types are seen there", append(repeat(10, `{"env":"prod"}`), `{"env":null}`),
			`{"properties":{"env":{"type":["null","string"]}},"required":["env"],"type":"object"}`},
		{"enum counts strings in arrays", []string{`{"tags":["a","b","a","b","a"]}`, `{"tags":["b","a","b","a","a"]}`},
			`{"properties":{"tags":{"items":{"enum":["a","b"],"type":"string"},"type":"array"}},"required":["tags"],"type":"object"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := schemainfer.Infer(samples(tc.samples...))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("Infer:\n got %s\nwant %s", got, tc.want)
			}
			checkFits(t, got, samples(tc.samples...))
		})
	}
}

func TestInferErrors(t *testing.T) {
	tests := []struct {
		samples []string
		want    string
	}{
		{nil, "no sample to infer a schema from"},
		{[]string{`{}`, `{"a":`}, "sample 2 of 2 is not JSON"},
		{[]string{`{} {}`}, "sample 1 of 1 is not one JSON value: something follows it"},
		{[]string{`{"a":1}}`}, "sample 1 of 1 is not one JSON value: something follows it"},
		{[]string{`{"secret":"hunter2"`}, "sample 1 of 1 is not JSON"},
	}
	for _, tc := range tests {
		if _, err := schemainfer.Infer(samples(tc.samples...)); err == nil || err.Error() != tc.want {
			t.Errorf("Infer(%q): %v, want %s", tc.samples, err, tc.want)
		}
	}
}

// checkFits compiles schema with the validator the mapping loader uses and checks every sample
// against it.
func checkFits(t *testing.T, schema json.RawMessage, samples []json.RawMessage) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatalf("the schema is not JSON: %v\n%s", err, schema)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("inferred.json", doc); err != nil {
		t.Fatal(err)
	}
	compiled, err := c.Compile("inferred.json")
	if err != nil {
		t.Fatalf("the schema does not compile: %v\n%s", err, schema)
	}
	for i, s := range samples {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(s))
		if err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
		if err := compiled.Validate(v); err != nil {
			t.Errorf("sample %d %s does not fit the schema inferred from it %s: %v", i, s, schema, err)
		}
	}
}

// FuzzInfer: whatever the samples, Infer does not panic, and every sample fits what it infers.
func FuzzInfer(f *testing.F) {
	f.Add(`{"a":1,"b":[1,"x",{"c":null}]}`, `{"a":2.5}`, 12)
	f.Add(`"x"`, `[]`, 1)
	f.Add(`{"env":"prod"}`, `{"env":"dev"}`, 6)
	f.Add(`{"n":-0}`, `{"n":1E400}`, 2)
	f.Fuzz(func(t *testing.T, a, b string, times int) {
		times = 1 + max(times, -times)%12
		var in []json.RawMessage
		for i := range times {
			for _, s := range []string{a, b} {
				if json.Valid([]byte(s)) {
					in = append(in, json.RawMessage(s))
				}
			}
			if i%3 == 0 && json.Valid([]byte(a)) {
				in = append(in, json.RawMessage(fmt.Sprintf(`{"k":%s}`, strings.TrimSpace(a))))
			}
		}
		schema, err := schemainfer.Infer(in)
		if len(in) == 0 {
			if err == nil {
				t.Fatal("Infer of no sample did not fail")
			}
			return
		}
		if err != nil {
			t.Fatalf("Infer of valid JSON: %v", err)
		}
		checkFits(t, schema, in)
	})
}
