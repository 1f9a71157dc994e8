package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/google/uuid"

	"github.com/taskgate/taskgate/adapters/stepfunctions"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mapping"
)

func TestDiscoverDraftsAValidMapping(t *testing.T) {
	endpoint := testenv.SFNEndpoint(t)
	ctx := context.Background()
	e, err := stepfunctions.New(ctx, stepfunctions.Config{Region: "us-east-1", Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	prefix := "disc-" + uuid.NewString()[:8] + "-"
	define := func(name, comment string, tags map[string]string) string {
		def, _ := json.Marshal(map[string]any{"Comment": comment, "StartAt": "Done", "States": map[string]any{"Done": map[string]any{"Type": "Succeed"}}})
		in := &sfn.CreateStateMachineInput{Name: aws.String(prefix + name), Definition: aws.String(string(def)),
			RoleArn: aws.String("arn:aws:iam::123456789012:role/taskgate-test")}
		for k, v := range tags {
			in.Tags = append(in.Tags, sfntypes.Tag{Key: aws.String(k), Value: aws.String(v)})
		}
		out, err := e.Client().CreateStateMachine(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.StateMachineArn)
	}
	withSchema := define("resize-images", `Resizes images. taskgate:inputSchema {"type":"object","properties":{"bucket":{"type":"string"}},"required":["bucket"]}`, map[string]string{"team": "media"})
	plain := define("nightly.report", "", map[string]string{"team": "media"})
	define("other-team", "", map[string]string{"team": "billing"})

	var out, warn strings.Builder
	err = runDiscover(ctx, []string{"stepfunctions", "--region", "us-east-1", "--endpoint", endpoint, "--prefix", prefix, "--tag", "team=media"}, &out, &warn)
	if err != nil {
		t.Fatalf("discover: %v\n%s", err, warn.String())
	}
	set, err := mapping.Parse("draft.yaml", []byte(out.String()))
	if err != nil {
		t.Fatalf("the draft does not load: %v\n%s", err, out.String())
	}
	if len(set.Tools) != 2 {
		t.Fatalf("draft has %d tools, want 2 (the billing one filtered out):\n%s", len(set.Tools), out.String())
	}
	resize, ok := set.Tool(prefix + "resize-images")
	if !ok || resize.Target.Name != withSchema || resize.Description != "Resizes images." || !strings.Contains(string(resize.InputSchema), `"bucket"`) {
		t.Fatalf("resize tool = %+v\n%s", resize, out.String())
	}
	report, ok := set.Tool(prefix + "nightly.report")
	if !ok || report.Target.Name != plain || string(report.InputSchema) != `{"type":"object"}` {
		t.Fatalf("report tool = %+v\n%s", report, out.String())
	}
	for _, want := range []string{prefix + "nightly.report has no description", prefix + "nightly.report has no input schema"} {
		if !strings.Contains(warn.String(), want) {
			t.Errorf("warnings lack %q:\n%s", want, warn.String())
		}
	}
	if err := resize.ValidateArguments(json.RawMessage(`{}`)); err == nil || err.Error() != `argument "bucket" is required` {
		t.Errorf("the discovered schema does not check arguments: %v", err)
	}
}

func TestDiscoverUsage(t *testing.T) {
	var out, errs strings.Builder
	for _, args := range [][]string{{"temporal"}, {"stepfunctions", "--tag", "novalue", "--region", "x"}} {
		if code := run(context.Background(), append([]string{"discover"}, args...), nil, &out, &errs); code != 2 {
			t.Errorf("discover %v: exit %d, want 2", args, code)
		}
	}
	if !strings.Contains(errs.String(), `--tag "novalue": want KEY=VALUE`) {
		t.Errorf("stderr = %s", errs.String())
	}
}

// TestValidateWithEngines checks targets against a real endpoint: a missing state machine is an
// error naming the tool and where it is defined; existing ones pass.
func TestValidateWithEngines(t *testing.T) {
	endpoint := testenv.SFNEndpoint(t)
	t.Setenv("SFN_ENDPOINT", endpoint)
	e, err := stepfunctions.New(context.Background(), stepfunctions.Config{Region: "us-east-1", Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sfnexamples.Ensure(context.Background(), e.Client(), "arn:aws:iam::123456789012:role/taskgate-examples"); err != nil {
		t.Fatal(err)
	}
	var out, errs strings.Builder
	if code := runValidate(context.Background(), []string{"--engines", "../../examples/stepfunctions/tools.yaml"}, &out, &errs); code != 0 {
		t.Fatalf("the examples: exit %d\n%s", code, errs.String())
	}
	if !strings.HasSuffix(strings.TrimSpace(out.String()), "every target checked against its engine") {
		t.Fatalf("stdout = %q", out.String())
	}

	dir := t.TempDir()
	missing := "taskgate-missing-" + uuid.NewString()[:8]
	os.WriteFile(filepath.Join(dir, "tools.yaml"), []byte(`engines:
  aws: {stepfunctions: {region: us-east-1, endpoint: "${SFN_ENDPOINT}"}}
tools:
  - name: ghost
    description: A state machine nobody created.
    engine: aws
    stateMachine: arn:aws:states:us-east-1:123456789012:stateMachine:`+missing+`
    inputSchema: {type: object}
`), 0o600)
	out.Reset()
	errs.Reset()
	if code := runValidate(context.Background(), []string{"--engines", dir}, &out, &errs); code != 1 {
		t.Fatalf("a missing state machine: exit %d, want 1\n%s", code, errs.String())
	}
	if want := `tool "ghost" (` + filepath.Join(dir, "tools.yaml") + `:4): `; !strings.HasPrefix(errs.String(), want) || !strings.Contains(errs.String(), missing) {
		t.Fatalf("stderr = %s\nwant it to start with %s and name the state machine", errs.String(), want)
	}
}
