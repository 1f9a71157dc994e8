package stepfunctions_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/google/uuid"

	"github.com/taskgate/taskgate/adapters/stepfunctions"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mapping"
)

// discover parses the flags of `taskgate discover stepfunctions` and returns what it runs.
func discover(t *testing.T, args ...string) func(ctx context.Context, w, warn io.Writer) error {
	t.Helper()
	fs := flag.NewFlagSet("discover stepfunctions", flag.ContinueOnError)
	run := stepfunctions.Driver{}.Discover(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return run
}

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
		out, err := sfnClient(t, e).CreateStateMachine(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.StateMachineArn)
	}
	withSchema := define("resize-images", `Resizes images. taskgate:inputSchema {"type":"object","properties":{"bucket":{"type":"string"}},"required":["bucket"]}`, map[string]string{"team": "media"})
	plain := define("nightly.report", "", map[string]string{"team": "media"})
	define("other-team", "", map[string]string{"team": "billing"})

	var out, warn strings.Builder
	err = discover(t, "--region", "us-east-1", "--endpoint", endpoint, "--prefix", prefix, "--tag", "team=media")(ctx, &out, &warn)
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

func TestDiscoverFlags(t *testing.T) {
	fs := flag.NewFlagSet("discover stepfunctions", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	stepfunctions.Driver{}.Discover(fs)
	const want = `invalid value "novalue" for flag -tag: want KEY=VALUE`
	if err := fs.Parse([]string{"--tag", "novalue"}); err == nil || err.Error() != want {
		t.Errorf("--tag novalue: %v, want %s", err, want)
	}
}

func TestDiscoverFindsNothing(t *testing.T) {
	endpoint := testenv.SFNEndpoint(t)
	prefix := "nothing-" + uuid.NewString()
	err := discover(t, "--region", "us-east-1", "--endpoint", endpoint, "--prefix", prefix)(t.Context(), io.Discard, io.Discard)
	want := `no state machine in us-east-1 matches (prefix "` + prefix + `", tags map[])`
	if err == nil || err.Error() != want {
		t.Errorf("discover: %v, want %s", err, want)
	}
}

// TestDiscoverInfer: --infer drafts the input schema of a state machine that declares none from
// its latest executions (whoever started them), says how many, and keeps a declared schema,
// saying it wins; a state machine that never ran gets the open object and a warning.
func TestDiscoverInfer(t *testing.T) {
	endpoint := testenv.SFNEndpoint(t)
	ctx := t.Context()
	e, err := stepfunctions.New(ctx, stepfunctions.Config{Region: "us-east-1", Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	prefix := "infer-" + uuid.NewString()[:8] + "-"
	define := func(name, comment string, inputs ...string) {
		def, _ := json.Marshal(map[string]any{"Comment": comment, "StartAt": "Done", "States": map[string]any{"Done": map[string]any{"Type": "Succeed"}}})
		out, err := sfnClient(t, e).CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String(prefix + name), Definition: aws.String(string(def)),
			RoleArn: aws.String("arn:aws:iam::123456789012:role/taskgate-test")})
		if err != nil {
			t.Fatal(err)
		}
		for i, in := range inputs {
			_, err := sfnClient(t, e).StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: out.StateMachineArn, Input: aws.String(in), Name: aws.String(fmt.Sprint("run-", i))})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	define("orders", "Takes orders.", `{"sku":"A-1","qty":2,"gift":{"note":"hi"}}`, `{"sku":"B-2","qty":1}`, `{"sku":"C-3","qty":1.5,"rush":null}`)
	define("typed", `Typed. taskgate:inputSchema {"type":"object","properties":{"id":{"type":"string"}}}`, `{"id":"x"}`, `{"id":"y"}`)
	define("unused", "Never ran.")

	var out, warn strings.Builder
	if err := discover(t, "--region", "us-east-1", "--endpoint", endpoint, "--prefix", prefix, "--infer", "25")(ctx, &out, &warn); err != nil {
		t.Fatalf("discover: %v\n%s", err, warn.String())
	}
	for _, want := range []string{
		`    inputSchema: {"properties":{"gift":{"properties":{"note":{"type":"string"}},"required":["note"],"type":"object"},"qty":{"type":"number"},"rush":{"type":"null"},"sku":{"type":"string"}},"required":["qty","sku"],"type":"object"}   # inferred from the 3 latest inputs: review it` + "\n",
		`    inputSchema: {"type":"object","properties":{"id":{"type":"string"}}}   # from the definition's Comment, which wins over the schema inferred from 2 inputs` + "\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the draft lacks\n%s\ndraft:\n%s", want, out.String())
		}
	}
	if want := "taskgate: warning: " + prefix + "unused has no input schema and no execution to infer one from: the draft accepts any object"; !strings.Contains(warn.String(), want) {
		t.Errorf("warnings lack %q:\n%s", want, warn.String())
	}
	if strings.Contains(out.String()+warn.String(), "A-1") {
		t.Errorf("an input's value is in the draft or the warnings (it has no enum for 3 inputs):\n%s\n%s", out.String(), warn.String())
	}
	set, err := mapping.Parse("draft.yaml", []byte(out.String()))
	if err != nil {
		t.Fatalf("the draft does not load: %v\n%s", err, out.String())
	}
	orders, _ := set.Tool(prefix + "orders")
	if err := orders.ValidateArguments(json.RawMessage(`{"qty":1}`)); err == nil || err.Error() != `argument "sku" is required` {
		t.Errorf("the inferred schema does not check arguments: %v", err)
	}
}
