package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/taskgate/taskgate/internal/testenv"
)

// sfnClient is a client of the Step Functions endpoint of SFN_ENDPOINT, to change what taskgate
// serves behind its back, as a pipeline or its owners would.
func sfnClient(t *testing.T) *sfn.Client {
	t.Helper()
	endpoint := testenv.SFNEndpoint(t)
	cfg, err := config.LoadDefaultConfig(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return sfn.NewFromConfig(cfg, func(o *sfn.Options) { o.BaseEndpoint = aws.String(endpoint) })
}

// createPassMachine creates a state machine that ends at once, under a name of its own.
func createPassMachine(t *testing.T, c *sfn.Client) string {
	t.Helper()
	b := make([]byte, 4)
	rand.Read(b)
	out, err := c.CreateStateMachine(t.Context(), &sfn.CreateStateMachineInput{
		Name:       aws.String("taskgate-drift-" + hex.EncodeToString(b)),
		Definition: aws.String(`{"StartAt": "Done", "States": {"Done": {"Type": "Pass", "End": true}}}`),
		RoleArn:    aws.String("arn:aws:iam::123456789012:role/taskgate-test"),
	})
	if err != nil {
		t.Fatalf("creating a state machine: %v", err)
	}
	return aws.ToString(out.StateMachineArn)
}

// startRuns starts executions of the state machine with these inputs, one after the other, as a
// pipeline would.
func startRuns(t *testing.T, c *sfn.Client, arn string, inputs ...string) {
	t.Helper()
	for _, in := range inputs {
		b := make([]byte, 8)
		rand.Read(b)
		if _, err := c.StartExecution(t.Context(), &sfn.StartExecutionInput{StateMachineArn: aws.String(arn), Input: aws.String(in),
			Name: aws.String(hex.EncodeToString(b))}); err != nil {
			t.Fatalf("starting an execution: %v", err)
		}
		time.Sleep(20 * time.Millisecond) // so that the listing orders them as started
	}
}

// driftMapping serves the state machine arn as the tool release, whose inputSchema asks for a
// string version and region and nothing else, and as shaped, which turns its arguments into
// another input.
func driftMapping(t *testing.T, arn string) string {
	t.Helper()
	dir := writeFiles(t, map[string]string{"tools.yaml": fmt.Sprintf(`engines:
  aws:
    stepfunctions: {region: us-east-1, endpoint: %q}
tools:
  - name: release
    description: Releases a version.
    engine: aws
    stateMachine: %q
    inputSchema:
      type: object
      required: [version, region]
      additionalProperties: false
      properties:
        version: {type: string}
        region: {type: string}
  - name: shaped
    description: Releases a version, reshaped.
    engine: aws
    stateMachine: %q
    inputSchema: {type: object, properties: {v: {type: string}}}
    input: '{version: .v, region: "eu"}'
`, testenv.SFNEndpoint(t), arn, arn)})
	return filepath.Join(dir, "tools.yaml")
}

// TestValidateFindsDrift: validate --engines reads the latest inputs of a real state machine and
// names each field where they leave the inputSchema, at the inputSchema, in text and in JSON, and
// exits 1; a state machine that is gone is reported at the tool's stateMachine key.
func TestValidateFindsDrift(t *testing.T) {
	c := sfnClient(t)
	arn := createPassMachine(t, c)
	startRuns(t, c, arn, `{"version": "1.1", "region": "eu"}`, `{"version": "1.2", "region": "eu"}`,
		`{"version": 3, "region": "eu"}`, `{"version": "1.4", "debug": true}`)
	file := driftMapping(t, arn)

	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"validate", "--engines", "--samples", "3", file}, nil, &stdout, &stderr)
	const hint = " (the workflow's input changed: fit the inputSchema to what it takes now, or ask who starts these executions)"
	want := file + `:9:5: tool "release": recent inputs: field "debug" is not allowed by the inputSchema (additionalProperties), but 1 of 3 recent inputs send it` + hint + "\n" +
		file + `:9:5: tool "release": recent inputs: field "region" is required by the inputSchema, but 1 of 3 recent inputs lack it` + hint + "\n" +
		file + `:9:5: tool "release": recent inputs: field "version" is string in the inputSchema, but 1 of 3 recent inputs send integer` + hint + "\n" +
		file + `:20:5: note: tool "shaped": recent inputs not checked: its input: program turns the arguments into another engine input, so what runs is not what the inputSchema describes` + "\n"
	if code != 1 || stdout.Len() > 0 || stderr.String() != want {
		t.Errorf("validate --engines = %d\nstdout:\n%s\nstderr:\n%s\nwant 1 and:\n%s", code, &stdout, &stderr, want)
	}

	stdout.Reset()
	stderr.Reset()
	code = run(t.Context(), []string{"validate", "--engines", "--samples", "3", "--format", "json", file}, nil, &stdout, &stderr)
	var out struct {
		OK, Drift bool
		Findings  []struct {
			File                           string
			Line, Col                      int
			Severity, Message, Tool, Check string
			Input                          *struct {
				Kind, Field string
				Count, Of   int
				Want        string
				Got         []string
			}
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || code != 1 || stderr.Len() > 0 {
		t.Fatalf("validate --format json = %d, %v\nstdout:\n%s\nstderr:\n%s", code, err, &stdout, &stderr)
	}
	var got []string
	for _, f := range out.Findings {
		line := fmt.Sprintf("%s:%d:%d %s %s %s", filepath.Base(f.File), f.Line, f.Col, f.Severity, f.Tool, f.Check)
		if in := f.Input; in != nil {
			line += fmt.Sprintf(" %s %s %d/%d %s %v", in.Kind, in.Field, in.Count, in.Of, in.Want, in.Got)
		}
		got = append(got, line)
	}
	wantJSON := []string{
		"tools.yaml:9:5 error release inputs forbidden debug 1/3  []",
		"tools.yaml:9:5 error release inputs missing region 1/3  []",
		"tools.yaml:9:5 error release inputs type version 1/3 string [integer]",
		"tools.yaml:20:5 note shaped inputs",
	}
	if out.OK || !out.Drift || strings.Join(got, "\n") != strings.Join(wantJSON, "\n") {
		t.Errorf("JSON: ok %v, drift %v, findings:\n%s\nwant not ok, drift, and:\n%s", out.OK, out.Drift, strings.Join(got, "\n"), strings.Join(wantJSON, "\n"))
	}

	gone := driftMapping(t, arn+"-gone")
	stdout.Reset()
	stderr.Reset()
	code = run(t.Context(), []string{"validate", "--engines", gone}, nil, &stdout, &stderr)
	if first, _, _ := strings.Cut(stderr.String(), "\n"); code != 1 || !strings.HasPrefix(first, gone+`:8:5: tool "release": target: `) || !strings.Contains(first, "-gone") {
		t.Errorf("validate with a state machine that is gone = %d\nstderr:\n%s\nwant the target reported at its key", code, &stderr)
	}
}

// TestServeWatchesDrift: a running serve checks again every --drift-every and shows a change in
// its metrics, its log and the detail of /readyz on the ops listener: inputs that no longer fit
// (executions started without a required field) and a state machine deleted under it.
func TestServeWatchesDrift(t *testing.T) {
	c := sfnClient(t)
	arn := createPassMachine(t, c)
	startRuns(t, c, arn, `{"version": "1.1", "region": "eu"}`, `{"version": "1.2", "region": "eu"}`)
	file := driftMapping(t, arn)
	p := startServing(t, os.Environ(), "serve", "--config", file, "--http", "127.0.0.1:0", "--ops-http", "127.0.0.1:0",
		"--token-format", "native", "--drift-every", "1s", "--drift-samples", "2")
	m := opsLine.FindStringSubmatch(p.stderr.String())
	if m == nil {
		t.Fatalf("serve did not say where its ops listener is:\n%s", p.stderr.String())
	}
	ops := m[1]

	const inputs, target = `taskgate_tool_drift{check="inputs",tool="release"} `, `taskgate_tool_drift{check="target",tool="release"} `
	waitFor(t, ops+"/metrics", inputs+"0", target+"0", `taskgate_tool_drift_checked_timestamp_seconds{check="inputs",tool="release"} `)
	if body, code := get(t, ops+"/readyz"); code != 200 || !strings.Contains(body, `drift: tool "release": target fits; inputs fits (2 recent inputs)`) ||
		!strings.Contains(body, `drift: tool "shaped": target fits; inputs skipped: its input: program`) {
		t.Errorf("/readyz before any drift = %d:\n%s", code, body)
	}

	startRuns(t, c, arn, `{"version": "1.3"}`, `{"version": "1.4"}`)
	waitFor(t, ops+"/metrics", inputs+"1", target+"0")
	const missing = `field "region" is required by the inputSchema, but 2 of 2 recent inputs lack it`
	if body, code := get(t, ops+"/readyz"); code != 200 || !strings.Contains(body, `drift: tool "release": target fits; inputs drifted: `+missing) ||
		!strings.Contains(body, "drift: 1 of 2 tools drifted, checked ") {
		t.Errorf("/readyz once the inputs drifted = %d, want 200 (drift does not fail readiness) and the finding:\n%s", code, body)
	}
	if logs := p.stderr.String(); strings.Count(logs, `drift check: drifted`) != 1 ||
		!strings.Contains(logs, `msg="drift check: drifted" tool=release check=inputs was=fits detail="drifted: field \"region\" is required`) {
		t.Errorf("the log does not say once that the inputs drifted:\n%s", logs)
	}

	if _, err := c.DeleteStateMachine(t.Context(), &sfn.DeleteStateMachineInput{StateMachineArn: aws.String(arn)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ops+"/metrics", target+"1", `taskgate_tool_drift{check="target",tool="shaped"} 1`)
	// Readiness keeps its own rule: a target that is gone cannot serve a call, so /readyz answers
	// 503 once it checks again (its passing answer stands 5 seconds), and its detail says what the
	// drift check found, without the engine's words.
	body, code := get(t, ops+"/readyz")
	for deadline := time.Now().Add(10 * time.Second); code != 503 && time.Now().Before(deadline); body, code = get(t, ops+"/readyz") {
		time.Sleep(200 * time.Millisecond)
	}
	if code != 503 || !strings.HasPrefix(body, `not ready: engine "aws" does not serve every mapped target`) {
		t.Errorf("/readyz once the state machine is gone = %d, want 503 for the missing target:\n%s", code, body)
	}
	if !strings.Contains(body, `drift: tool "release": target drifted (the server's log says why); `) || strings.Contains(body, testenv.SFNEndpoint(t)) || !strings.Contains(body, "drift: 2 of 2 tools drifted") {
		t.Errorf("/readyz once the state machine is gone = %d:\n%s", code, body)
	}
	if !strings.Contains(body, `inputs unknown: not checked (the server's log says why)`) {
		t.Errorf("/readyz does not say the inputs were not checked:\n%s", body)
	}
	// A check that cannot be made keeps the last answer: the inputs stay drifted in the metrics.
	if metrics, _ := get(t, ops+"/metrics"); !strings.Contains(metrics, inputs+"1") {
		t.Errorf("the inputs' last answer is gone from the metrics:\n%s", grepDrift(metrics))
	}
}

// waitFor polls url until its body holds every one of want, for up to 20 seconds.
func waitFor(t *testing.T, url string, want ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		body, _ := get(t, url)
		missing := ""
		for _, w := range want {
			if !strings.Contains(body, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not show %q after 20s:\n%s", url, missing, grepDrift(body))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func get(t *testing.T, url string) (string, int) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), resp.StatusCode
}

// grepDrift is the lines of a metrics page about drift.
func grepDrift(body string) string {
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, "drift") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}
