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
	c.inputSchema, c.outputSchema = nil, nil
	c.driver = nil
	if t.Input != nil {
		c.Input = &Transform{Source: t.Input.Source}
	}
	if t.Result != nil {
		c.Result = &Transform{Source: t.Result.Source}
	}
	return c
}

func TestLoadGoodFolder(t *testing.T) {
	unsetenv(t, "TASKGATE_TEST_URL")
	unsetenv(t, "TASKGATE_TEST_ZONE")
	unsetenv(t, "TASKGATE_TEST_JOB")
	set, err := Load("testdata/good")
	if err != nil {
		t.Fatal(err)
	}

	wantEngines := map[string]*Engine{
		"local": {Name: "local", Kind: "alpha", Config: alphaConfig{URL: "http://127.0.0.1:7233"}},
		"cloud": {Name: "cloud", Kind: "alpha", Config: alphaConfig{URL: "http://cloud.example", Wait: 30 * time.Second, Strict: true, Limits: true, Max: "10"}},
		"other": {Name: "other", Kind: "beta", Config: betaConfig{}},
	}
	if !reflect.DeepEqual(set.Engines, wantEngines) {
		for name, e := range set.Engines {
			t.Logf("%s: %+v", name, e)
		}
		t.Error("engines differ")
	}

	quickSchema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)
	want := []Tool{
		{ // more.yml sorts before tools.yaml
			Name: "quick_echo", Description: "Echoes at once.", Engine: "local",
			Target:      adapters.Target{Name: "price$check", Spec: alphaWork{}},
			TaskSupport: TaskForbidden, Timeout: 30 * time.Second, PollInterval: time.Second, PollIntervalMax: 30 * time.Second, PollIntervalGrowsAfter: time.Minute, TTL: 24 * time.Hour,
			InputSchema:   quickSchema,
			Input:         &Transform{Source: "{seconds: 0, text}"},
			Source:        "testdata/good/more.yml:4",
			InputSchemaAt: Position{"testdata/good/more.yml", 10, 5}, TargetAt: Position{"testdata/good/more.yml", 7, 5},
		},
		{
			Name: "quick_echo_async", Description: "Echoes at once.", Engine: "local",
			Target:      adapters.Target{Name: "price$check", Spec: alphaWork{}},
			TaskSupport: TaskRequired, Timeout: 30 * time.Second, PollInterval: time.Second, PollIntervalMax: 30 * time.Second, PollIntervalGrowsAfter: time.Minute, TTL: 24 * time.Hour,
			InputSchema:   quickSchema,
			Input:         &Transform{Source: "{seconds: 0, text}"},
			Source:        "testdata/good/more.yml:17",
			InputSchemaAt: Position{"testdata/good/more.yml", 17, 5}, TargetAt: Position{"testdata/good/more.yml", 17, 5},
		},
		{ // only what is required: every default
			Name: "wait_and_echo", Description: "Waits, then echoes the text.", Engine: "local",
			Target:      adapters.Target{Name: "WaitAndEcho", Spec: alphaWork{}},
			TaskSupport: TaskRequired, Timeout: 60 * time.Second, PollInterval: time.Second, PollIntervalMax: 30 * time.Second, PollIntervalGrowsAfter: time.Minute, TTL: 24 * time.Hour,
			InputSchema:   json.RawMessage(`{"type":"object","properties":{"seconds":{"type":"number","minimum":0},"text":{"type":"string"}},"required":["seconds","text"]}`),
			Source:        "testdata/good/tools.yaml:2",
			InputSchemaAt: Position{"testdata/good/tools.yaml", 6, 5}, TargetAt: Position{"testdata/good/tools.yaml", 5, 5},
		},
		{ // every key
			Name: "order.pipeline-v2", Title: "Order pipeline", Description: "Runs the order pipeline.\nTakes a while.\n", Engine: "other",
			Target:      adapters.Target{Name: "orders:prod"},
			TaskSupport: TaskForbidden, Timeout: 5 * time.Minute, PollInterval: 500 * time.Millisecond, PollIntervalMax: 10 * time.Second, PollIntervalGrowsAfter: 2 * time.Minute, MaxStaleness: 5 * time.Second, TTL: 0,
			InputSchema:   json.RawMessage(`{"type":"object","properties":{"order":{"type":"string"}}}`),
			OutputSchema:  json.RawMessage(`{"type":"object","properties":{"total":{"type":"number"}}}`),
			Input:         &Transform{Source: "{order_id: .order}"},
			Result:        &Transform{Source: "{total: .sum}"},
			Source:        "testdata/good/tools.yaml:13",
			InputSchemaAt: Position{"testdata/good/tools.yaml", 27, 5}, TargetAt: Position{"testdata/good/tools.yaml", 19, 5},
		},
		{
			Name: "summarize", Description: "Summarizes in the cloud.", Engine: "cloud",
			Target:      adapters.Target{Name: "Summarize", Spec: alphaWork{time.Hour}},
			TaskSupport: TaskRequired, Timeout: 60 * time.Second, PollInterval: time.Second, PollIntervalMax: 30 * time.Second, PollIntervalGrowsAfter: time.Minute, TTL: time.Hour,
			InputSchema:   json.RawMessage(`{"type":"object"}`),
			Source:        "testdata/good/tools.yaml:32",
			InputSchemaAt: Position{"testdata/good/tools.yaml", 39, 5}, TargetAt: Position{"testdata/good/tools.yaml", 35, 5},
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
	t.Setenv("TASKGATE_TEST_URL", "http://internal")
	t.Setenv("TASKGATE_TEST_ZONE", "z9")
	t.Setenv("TASKGATE_TEST_JOB", "") // empty: the default applies
	set, err := Load("testdata/good")
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Engines["local"].Config.(alphaConfig).URL; got != "http://internal" {
		t.Errorf("url = %q", got)
	}
	if got := set.Engines["other"].Config.(betaConfig).Zone; got != "z9" {
		t.Errorf("zone = %q", got)
	}
	if tool, _ := set.Tool("summarize"); tool.Target.Name != "Summarize" {
		t.Errorf("work = %q", tool.Target.Name)
	}

	// An explicit environment replaces the process's.
	set, err = Loader{Env: adapters.Env{"TASKGATE_TEST_URL=http://explicit", "TASKGATE_TEST_JOB=Other"}}.Load("testdata/good")
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Engines["local"].Config.(alphaConfig).URL; got != "http://explicit" {
		t.Errorf("url from Loader.Env = %q", got)
	}
	if got := set.Engines["other"].Config.(betaConfig).Zone; got != "" {
		t.Errorf("zone from Loader.Env = %q, want the default, since the process's variable is not there", got)
	}
	if tool, _ := set.Tool("summarize"); tool.Target.Name != "Other" {
		t.Errorf("work from Loader.Env = %q", tool.Target.Name)
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
		got, err := expandEnv(c.in, nil)
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

// TestYAMLFeatures checks that anchors, merge keys, tags and explicit keys read as YAML says.
func TestYAMLFeatures(t *testing.T) {
	const file = `
engines:
  local: {alpha: {url: "http://x"}}
tools:
  - &first
    name: first
    description: Shared description.
    engine: local
    work: &work {name: !!str 123, timeout: 1m}
    pollInterval: 1s
    inputSchema: {type: object}
  - <<: [{ttl: 1h}, *first]
    name: second
    ? description
    : !!str 2024
    work: {<<: *work, timeout: 2m}
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
	if first.Target != (adapters.Target{Name: "123", Spec: alphaWork{time.Minute}}) || first.TTL != 24*time.Hour {
		t.Errorf("first: %+v, ttl %s", first.Target, first.TTL)
	}
	if second.Target != (adapters.Target{Name: "123", Spec: alphaWork{2 * time.Minute}}) || second.Description != "2024" ||
		second.PollInterval != time.Second || second.TTL != time.Hour || second.Engine != "local" {
		t.Errorf("second: %+v, %q, poll %s, ttl %s, engine %q", second.Target, second.Description, second.PollInterval, second.TTL, second.Engine)
	}
	if out, err := second.EngineInput(json.RawMessage(`{"b": 1}`)); err != nil || string(out) != `{"a":1}` {
		t.Errorf("input = %s, %v", out, err)
	}
}

// TestRefsThroughTheDrivers: a tool writes and reads native ids through its engine's driver.
func TestRefsThroughTheDrivers(t *testing.T) {
	set, err := Load("testdata/good")
	if err != nil {
		t.Fatal(err)
	}
	ref := adapters.Ref{ID: "work-1"}
	if got := set.FormatRef("wait_and_echo", ref); got != "alpha:work-1" {
		t.Errorf("FormatRef of an alpha tool = %q", got)
	}
	if got := set.FormatRef("order.pipeline-v2", ref); got != "work-1" {
		t.Errorf("FormatRef of a beta tool = %q", got)
	}
	alphaTool, _ := set.Tool("wait_and_echo")
	if got, err := alphaTool.ParseRef("alpha:work-1"); err != nil || got != ref {
		t.Errorf("ParseRef = %v, %v", got, err)
	}
	if _, err := alphaTool.ParseRef("work-1"); err == nil {
		t.Errorf("an alpha tool read a beta id")
	}
}
