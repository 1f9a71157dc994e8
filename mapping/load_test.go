package mapping

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters"
)

// unsetenv unsets an environment variable for the duration of the test.
func unsetenv(t *testing.T, key string) {
	t.Setenv(key, "") // restores the old value after the test
	os.Unsetenv(key)
}

func TestBadFiles(t *testing.T) {
	unsetenv(t, "TASKGATE_TEST_UNSET")
	for _, c := range badFiles {
		t.Run(c.name, func(t *testing.T) {
			set, err := Parse("m.yaml", []byte(c.src))
			if err == nil {
				t.Fatalf("no error, want:\n%s", c.want)
			}
			var errs *Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error is a %T, want *Errors: %v", err, err)
			}
			if set != nil {
				t.Error("a Set came with the error")
			}
			if got := err.Error(); got != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

// TestAllErrorsOfAllFiles loads files and folders that have problems in several places: every
// problem is reported, sorted by file and position, with what spans files (engine and tool
// names) pointing at both places.
func TestAllErrorsOfAllFiles(t *testing.T) {
	_, err := Load("testdata/bad", "testdata/missing.yaml", "testdata/nomappings")
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("got %v, want *Errors", err)
	}
	want := []Error{
		{"testdata/bad/b.yaml", 2, 3, `engines: engine "local" is already defined at testdata/bad/a.yaml:2:3`, "engine names must be unique across all mapping files"},
		{"testdata/bad/b.yaml", 5, 11, `tools[0].name: tool "echo" is already defined at testdata/bad/a.yaml:5:11`, "tool names must be unique across all mapping files"},
		{"testdata/bad/b.yaml", 12, 13, `tools[1].engine: no engine named "locl"`, `did you mean "local"? known engines: local`},
		{"testdata/bad/b.yaml", 14, 19, `tools[1].pollInterval: "1" is not a duration`, "use a Go duration like 30s, 5m, 24h"},
		{"testdata/bad/c.yml", 1, 8, "invalid YAML: sequence end token ']' not found", "check the indentation and quoting"},
		{"testdata/missing.yaml", 0, 0, "no such file or folder", "pass mapping files (.yaml, .yml) or folders of them"},
		{"testdata/nomappings", 0, 0, "no mapping files (*.yaml, *.yml) in this folder", "add one, or pass the files themselves"},
	}
	if !reflect.DeepEqual(errs.List, want) {
		t.Errorf("got:\n%s\nwant:\n%s", errs, &Errors{List: want})
	}
	const text = `testdata/bad/b.yaml:2:3: engines: engine "local" is already defined at testdata/bad/a.yaml:2:3 (engine names must be unique across all mapping files)
testdata/bad/b.yaml:5:11: tools[0].name: tool "echo" is already defined at testdata/bad/a.yaml:5:11 (tool names must be unique across all mapping files)
testdata/bad/b.yaml:12:13: tools[1].engine: no engine named "locl" (did you mean "local"? known engines: local)
testdata/bad/b.yaml:14:19: tools[1].pollInterval: "1" is not a duration (use a Go duration like 30s, 5m, 24h)
testdata/bad/c.yml:1:8: invalid YAML: sequence end token ']' not found (check the indentation and quoting)
testdata/missing.yaml: no such file or folder (pass mapping files (.yaml, .yml) or folders of them)
testdata/nomappings: no mapping files (*.yaml, *.yml) in this folder (add one, or pass the files themselves)`
	if err.Error() != text {
		t.Errorf("Error() =\n%s\nwant:\n%s", err, text)
	}
}

func TestLoadNoPaths(t *testing.T) {
	if _, err := Load(); err == nil || err.Error() != "mapping: no paths to load: pass mapping files or folders of them" {
		t.Errorf("Load() = %v", err)
	}
}

// withoutCode returns a copy of t without compiled parts, to compare with a literal.
func withoutCode(t *Tool) Tool {
	c := *t
	c.inputSchema = nil
	if t.Input != nil {
		c.Input = &Transform{Source: t.Input.Source}
	}
	if t.Result != nil {
		c.Result = &Transform{Source: t.Result.Source}
	}
	return c
}

func TestLoadGoodFolder(t *testing.T) {
	unsetenv(t, "TASKGATE_TEST_ADDRESS")
	unsetenv(t, "TASKGATE_TEST_SFN_ENDPOINT")
	unsetenv(t, "TASKGATE_TEST_QUEUE")
	set, err := Load("testdata/good")
	if err != nil {
		t.Fatal(err)
	}

	wantEngines := map[string]*Engine{
		"local": {Name: "local", Temporal: &Temporal{Address: "127.0.0.1:7233", Namespace: "default"}},
		"cloud": {Name: "cloud", Temporal: &Temporal{
			Address:   "my-ns.a1b2c.tmprl.cloud:7233",
			Namespace: "my-ns.a1b2c",
			TLS:       &TLS{CAFile: "ca.pem", CertFile: "client.pem", KeyFile: "client.key", ServerName: "my-ns.example"},
			APIKeyEnv: "TEMPORAL_API_KEY",
		}},
		"aws": {Name: "aws", StepFunctions: &StepFunctions{Region: "us-east-1", RoleARN: "arn:aws:iam::123456789012:role/taskgate"}},
	}
	if !reflect.DeepEqual(set.Engines, wantEngines) {
		for name, e := range set.Engines {
			t.Logf("%s: %+v %+v %+v", name, e, e.Temporal, e.StepFunctions)
		}
		t.Error("engines differ")
	}

	quickSchema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)
	want := []Tool{
		{ // more.yml sorts before tools.yaml
			Name: "quick_echo", Description: "Echoes at once.", Engine: "local",
			Target:      adapters.Target{Name: "WaitAndEcho", Queue: "price$check"},
			TaskSupport: TaskForbidden, Timeout: 30 * time.Second, PollInterval: 2 * time.Second, TTL: 24 * time.Hour,
			InputSchema: quickSchema,
			Input:       &Transform{Source: "{seconds: 0, text}"},
			Source:      "testdata/good/more.yml:5",
		},
		{
			Name: "quick_echo_async", Description: "Echoes at once.", Engine: "local",
			Target:      adapters.Target{Name: "WaitAndEcho", Queue: "price$check"},
			TaskSupport: TaskRequired, Timeout: 30 * time.Second, PollInterval: 2 * time.Second, TTL: 24 * time.Hour,
			InputSchema: quickSchema,
			Input:       &Transform{Source: "{seconds: 0, text}"},
			Source:      "testdata/good/more.yml:18",
		},
		{ // only what is required: every default
			Name: "wait_and_echo", Description: "Waits, then echoes the text.", Engine: "local",
			Target:      adapters.Target{Name: "WaitAndEcho", Queue: "taskgate-examples"},
			TaskSupport: TaskRequired, Timeout: 60 * time.Second, PollInterval: 2 * time.Second, TTL: 24 * time.Hour,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"seconds":{"type":"number","minimum":0},"text":{"type":"string"}},"required":["seconds","text"]}`),
			Source:      "testdata/good/tools.yaml:3",
		},
		{ // every key
			Name: "order.pipeline-v2", Title: "Order pipeline", Description: "Runs the order pipeline.\nTakes a while.\n", Engine: "aws",
			Target:      adapters.Target{Name: "arn:aws:states:us-east-1:123456789012:stateMachine:orders:prod"},
			TaskSupport: TaskForbidden, Timeout: 5 * time.Minute, PollInterval: 500 * time.Millisecond, TTL: 0,
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"order":{"type":"string"}}}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"total":{"type":"number"}}}`),
			Input:        &Transform{Source: "{order_id: .order}"},
			Result:       &Transform{Source: "{total: .sum}"},
			Source:       "testdata/good/tools.yaml:14",
		},
		{
			Name: "summarize", Description: "Summarizes in the cloud.", Engine: "cloud",
			Target:      adapters.Target{Name: "Summarize", Queue: "summaries", Timeout: time.Hour},
			TaskSupport: TaskRequired, Timeout: 60 * time.Second, PollInterval: 2 * time.Second, TTL: time.Hour,
			InputSchema: json.RawMessage(`{"type":"object"}`),
			Source:      "testdata/good/tools.yaml:30",
		},
	}
	if len(set.Tools) != len(want) {
		t.Fatalf("got %d tools, want %d", len(set.Tools), len(want))
	}
	for i, tool := range set.Tools {
		if got := withoutCode(tool); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("tool %d:\ngot  %+v\nwant %+v", i, got, want[i])
		}
		if byName, ok := set.Tool(tool.Name); !ok || byName != tool {
			t.Errorf("Tool(%q) = %v, %v", tool.Name, byName, ok)
		}
	}
	if _, ok := set.Tool("nope"); ok {
		t.Error(`Tool("nope") found a tool`)
	}
}

func TestLoadFileAndFolderTogether(t *testing.T) {
	// A file named twice (once through its folder) is read once.
	set, err := Load("testdata/good/", "testdata/good/tools.yaml", "./testdata/good/engines.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Tools) != 5 || len(set.Engines) != 3 {
		t.Errorf("got %d tools and %d engines, want 5 and 3", len(set.Tools), len(set.Engines))
	}
}

func TestEnvironment(t *testing.T) {
	t.Setenv("TASKGATE_TEST_ADDRESS", "temporal.internal:7233")
	t.Setenv("TASKGATE_TEST_SFN_ENDPOINT", "http://127.0.0.1:8083")
	t.Setenv("TASKGATE_TEST_QUEUE", "") // empty: the default applies
	set, err := Load("testdata/good")
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Engines["local"].Temporal.Address; got != "temporal.internal:7233" {
		t.Errorf("address = %q", got)
	}
	if got := set.Engines["aws"].StepFunctions.Endpoint; got != "http://127.0.0.1:8083" {
		t.Errorf("endpoint = %q", got)
	}
	if tool, _ := set.Tool("summarize"); tool.Target.Queue != "summaries" {
		t.Errorf("queue = %q", tool.Target.Queue)
	}
}

func TestExpandEnv(t *testing.T) {
	t.Setenv("TASKGATE_TEST_A", "alpha")
	t.Setenv("TASKGATE_TEST_EMPTY", "")
	unsetenv(t, "TASKGATE_TEST_UNSET")
	for _, c := range []struct{ in, want, err string }{
		{"plain", "plain", ""},
		{"${TASKGATE_TEST_A}", "alpha", ""},
		{"x-${TASKGATE_TEST_A}-${TASKGATE_TEST_A}:1", "x-alpha-alpha:1", ""},
		{"${TASKGATE_TEST_EMPTY}", "", ""},
		{"${TASKGATE_TEST_EMPTY:-d}", "d", ""},
		{"${TASKGATE_TEST_UNSET:-127.0.0.1:7233}", "127.0.0.1:7233", ""},
		{"${TASKGATE_TEST_UNSET:-}", "", ""},
		{"${TASKGATE_TEST_A:-d}", "alpha", ""},
		{"$$", "$", ""},
		{"a$$${TASKGATE_TEST_A}$$", "a$alpha$", ""},
		{"$${TASKGATE_TEST_A}", "${TASKGATE_TEST_A}", ""},
		{"${TASKGATE_TEST_UNSET}", "", "environment variable TASKGATE_TEST_UNSET is not set"},
		{"${TASKGATE_TEST_A", "", `"${TASKGATE_TEST_A" has no closing }`},
		{"${}", "", `"" is not a valid environment variable name`},
		{"${A-B}", "", `"A-B" is not a valid environment variable name`},
		{"${TASKGATE_TEST_A:-${TASKGATE_TEST_B}}", "", "a default cannot hold another ${VAR}"},
		{"$A", "", `a "$" that starts no ${VAR}`},
		{"a$", "", `a "$" that starts no ${VAR}`},
	} {
		got, err := expandEnv(c.in)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("expandEnv(%q) error = %v, want %s", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("expandEnv(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// TestValueForms checks which forms of addresses and ARNs are accepted.
func TestValueForms(t *testing.T) {
	for _, c := range []struct {
		file string
		ok   bool
	}{
		{`engines: {a: {temporal: {address: "127.0.0.1:7233"}}}`, true},
		{`engines: {a: {temporal: {address: "[::1]:7233"}}}`, true},
		{`engines: {a: {temporal: {address: "my-ns.a1b2c.tmprl.cloud:7233"}}}`, true},
		{`engines: {a: {temporal: {address: "localhost:0"}}}`, false},
		{`engines: {a: {temporal: {address: "localhost:70000"}}}`, false},
		{`engines: {a: {temporal: {address: ":7233"}}}`, false},
		{`engines: {a: {temporal: {address: "http://localhost:7233"}}}`, false},
		{`engines: {a: {stepfunctions: {region: us-gov-west-1, roleArn: "arn:aws-us-gov:iam::123456789012:role/path/to/r"}}}`, true},
		{`engines: {a: {stepfunctions: {region: cn-north-1, endpoint: "https://states.cn-north-1.amazonaws.com.cn"}}}`, true},
		{`engines: {a: {stepfunctions: {region: us-east-1, endpoint: "ftp://x"}}}`, false},
	} {
		_, err := Parse("v.yaml", []byte(c.file))
		if (err == nil) != c.ok {
			t.Errorf("%s: error %v, want ok=%v", c.file, err, c.ok)
		}
	}
	for _, c := range []struct {
		arn string
		ok  bool
	}{
		{"arn:aws:states:us-east-1:123456789012:stateMachine:orders", true},
		{"arn:aws:states:us-east-1:123456789012:stateMachine:orders:prod", true},
		{"arn:aws:states:us-east-1:123456789012:stateMachine:orders:12", true},
		{"arn:aws-cn:states:cn-north-1:123456789012:stateMachine:orders_v2-x", true},
		{"arn:aws:states:us-east-1:123456789012:execution:orders:run-1", false},
		{"arn:aws:states:us-east-1:1234:stateMachine:orders", false},
		{"arn:aws:states:us-east-1:123456789012:stateMachine:orders:", false},
		{"arn:aws:states:us-east-1:123456789012:stateMachine:a:b:c", false},
		{"orders", false},
	} {
		file := `engines: {s: {stepfunctions: {region: us-east-1}}}
tools: [{name: a, description: d, engine: s, inputSchema: {type: object}, stateMachine: "` + c.arn + `"}]`
		set, err := Parse("arn.yaml", []byte(file))
		if (err == nil) != c.ok {
			t.Errorf("%s: error %v, want ok=%v", c.arn, err, c.ok)
		}
		if err == nil && set.Tools[0].Target != (adapters.Target{Name: c.arn}) {
			t.Errorf("%s: target %+v", c.arn, set.Tools[0].Target)
		}
	}
}

// TestYAMLFeatures checks that anchors, merge keys, tags and explicit keys read as YAML says.
func TestYAMLFeatures(t *testing.T) {
	const file = `
engines:
  local: {temporal: {address: "127.0.0.1:7233"}}
tools:
  - &first
    name: first
    description: Shared description.
    engine: local
    workflow: &wf {type: A, taskQueue: !!str 123}
    pollInterval: 1s
    inputSchema: {type: object}
  - <<: [{ttl: 1h}, *first]
    name: second
    ? description
    : !!str 2024
    workflow: {<<: *wf, type: B}
    input: |
      {
        a: .b
      }
`
	set, err := Parse("yaml.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	first, second := set.Tools[0], set.Tools[1]
	if first.Target != (adapters.Target{Name: "A", Queue: "123"}) || first.TTL != 24*time.Hour {
		t.Errorf("first: %+v, ttl %s", first.Target, first.TTL)
	}
	if second.Target != (adapters.Target{Name: "B", Queue: "123"}) || second.Description != "2024" ||
		second.PollInterval != time.Second || second.TTL != time.Hour || second.Engine != "local" {
		t.Errorf("second: %+v, %q, poll %s, ttl %s, engine %q", second.Target, second.Description, second.PollInterval, second.TTL, second.Engine)
	}
	if out, err := second.EngineInput(json.RawMessage(`{"b": 1}`)); err != nil || string(out) != `{"a":1}` {
		t.Errorf("input = %s, %v", out, err)
	}
}
