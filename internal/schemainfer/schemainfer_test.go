package schemainfer_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
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
			got, _, err := schemainfer.Infer(samples(tc.samples...), schemainfer.Options{Enums: true})
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

// closedSet is ten samples that show the closed set {value} at the property name, beside a
// region of two values.
func closedSet(name, value string) []string {
	out := make([]string, 10)
	for i := range out {
		v, _ := json.Marshal(map[string]string{name: value, "region": []string{"eu-west-1", "us-east-1"}[i%2]})
		out[i] = string(v)
	}
	return out
}

// TestInferEnumsOff: without Options.Enums, a closed set of strings is no enum, and its place is
// noted open.
func TestInferEnumsOff(t *testing.T) {
	in := samples(append(repeat(8, `{"env":"prod","tags":["a","b"],"note":"x"}`), `{"env":"dev","tags":["a"],"note":"y"}`, `{"env":"dev","tags":["b"],"note":"z"}`)...)
	got, open, err := schemainfer.Infer(in, schemainfer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"properties":{"env":{"type":"string"},"note":{"type":"string"},"tags":{"items":{"type":"string"},"type":"array"}},"required":["env","note","tags"],"type":"object"}`
	wantOpen := []schemainfer.Open{{Path: ".env", Reason: schemainfer.EnumsOff}, {Path: ".tags[]", Reason: schemainfer.EnumsOff}}
	if string(got) != want || !slices.Equal(open, wantOpen) {
		t.Errorf("Infer:\n got %s, open %v\nwant %s, open %v", got, open, want, wantOpen)
	}
}

// TestInferLeavesSecretsOpen: with Options.Enums, a closed set is no enum where a name on its path
// reads as a secret, or a value is long or random-looking; the schema holds no such value, says
// why, and still fits every sample. Region, beside them, has its enum.
func TestInferLeavesSecretsOpen(t *testing.T) {
	tests := []struct {
		name    string
		samples []string
		secret  string
		open    []schemainfer.Open
	}{
		{"a secret's name", closedSet("apiToken", "abc"), `"abc"`, []schemainfer.Open{{Path: ".apiToken", Reason: schemainfer.SecretName}}},
		{"a secret's name in snake case", closedSet("db_password", "hunter2"), "hunter2", []schemainfer.Open{{Path: ".db_password", Reason: schemainfer.SecretName}}},
		{"a name that is no identifier is quoted", closedSet("X-Api-Key\n", "k1"), "k1", []schemainfer.Open{{Path: `["X-Api-Key\n"]`, Reason: schemainfer.SecretName}}},
		{"under a secret's name", repeat(10, `{"credentials":{"user":"svc-ops"},"region":"eu-west-1"}`), "svc-ops",
			[]schemainfer.Open{{Path: ".credentials.user", Reason: schemainfer.SecretName}}},
		{"items of a secret's name", repeat(10, `{"tokens":["t1"],"region":"eu-west-1"}`), `"t1"`, []schemainfer.Open{{Path: ".tokens[]", Reason: schemainfer.SecretName}}},
		{"a long value", closedSet("webhook", strings.Repeat("ab", 17)), "abab", []schemainfer.Open{{Path: ".webhook", Reason: schemainfer.LongValue}}},
		{"a random-looking value", closedSet("config", "Zx8Qe2LmT4vRk9Wn"), "Zx8Qe2LmT4vRk9Wn", []schemainfer.Open{{Path: ".config", Reason: schemainfer.RandomValue}}},
		{"a random-looking hex value", closedSet("build", "9f86d081884c7d65"), "9f86d081884c7d65", []schemainfer.Open{{Path: ".build", Reason: schemainfer.RandomValue}}},
		{"a long property name", repeat(10, `{"byId":{"3f2b8c9e-4d1a-4f6b-9a7c-2e5d8b1f0c3a":1,"count":3},"region":"eu-west-1"}`), "3f2b8c9e",
			[]schemainfer.Open{{Path: ".byId", Reason: schemainfer.SecretKeys}}},
		{"a random-looking property name", repeat(10, `{"Zx8Qe2LmT4vRk9Wn":{"n":1},"region":"eu-west-1"}`), "Zx8Qe2LmT4vRk9Wn",
			[]schemainfer.Open{{Path: "", Reason: schemainfer.SecretKeys}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, open, err := schemainfer.Infer(samples(tc.samples...), schemainfer.Options{Enums: true})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(got), tc.secret) || !strings.Contains(string(got), `"region":{"enum":[`) {
				t.Errorf("Infer copied a value that could be a secret, or drafted no enum of region: %s", got)
			}
			if !slices.Equal(open, tc.open) {
				t.Errorf("open = %v, want %v", open, tc.open)
			}
			checkFits(t, got, samples(tc.samples...))
		})
	}
	got, open, err := schemainfer.Infer(samples(closedSet("env", "prod")...), schemainfer.Options{Enums: true})
	const want = `{"properties":{"env":{"enum":["prod"],"type":"string"},"region":{"enum":["eu-west-1","us-east-1"],"type":"string"}},"required":["env","region"],"type":"object"}`
	if err != nil || string(got) != want || len(open) != 0 {
		t.Errorf("plain short values: %s, open %v, %v; want %s", got, open, err, want)
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
		if _, _, err := schemainfer.Infer(samples(tc.samples...), schemainfer.Options{}); err == nil || err.Error() != tc.want {
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
		schema, _, err := schemainfer.Infer(in, schemainfer.Options{Enums: times%2 == 0})
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
