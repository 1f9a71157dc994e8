package mcpserver_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/temporal"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

// issued are the task ids of testdata/issued-b842327, which taskgate b842327 issued before a Ref
// became one id in its engine's encoding: two `taskgate dev --config ids.yaml` of that commit, one
// sealing ids under tokenKeys (its Temporal ids carry the run id apart) and one with
// --token-format native, each called both tools once and waited until the task completed.
// temporal.db.gz is that dev server's database: its namespace taskgate-ids keeps closed
// workflows ten years. The Step Functions executions were in an emulator's memory; the test
// starts them again under their names.
type issued struct {
	TokenKeys string
	IDs       []struct {
		Format, Tool, ID, Text             string
		ExecutionARN, ExecutionName, Input string
	}
}

// TestIDsIssuedBeforeOneIDRefs: every sealed id b842327 issued still names its execution: it
// resolves to its tool, and its task is completed with that execution's output. Its native ids
// are not found: their suffixes carry no MAC (driver.Minted), so they cannot be told from ids a
// client made up, and such executions are read through their sealed ids only.
func TestIDsIssuedBeforeOneIDRefs(t *testing.T) {
	const dir = "testdata/issued-b842327"
	var ids issued
	b, err := os.ReadFile(filepath.Join(dir, "issued.json"))
	if err == nil {
		err = json.Unmarshal(b, &ids)
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	dev, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath:  testenv.TemporalCLI(t),
		DBFilename:    unzip(t, filepath.Join(dir, "temporal.db.gz")),
		ClientOptions: &client.Options{Namespace: "taskgate-ids"},
		LogLevel:      "error",
		Stdout:        io.Discard, Stderr: io.Discard,
	})
	if err != nil {
		t.Fatalf("starting a Temporal dev server on the database of b842327: %v", err)
	}
	t.Cleanup(func() { _ = dev.Stop() })

	endpoint := testenv.SFNEndpoint(t)
	env := adapters.Env(nil).With("TEMPORAL_ADDRESS="+dev.FrontendHostPort(), "SFN_ENDPOINT="+endpoint)
	set, err := mapping.Loader{Env: env}.Load(filepath.Join(dir, "ids.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	engines := map[string]adapters.Conn{}
	for name, e := range set.Engines {
		if engines[name], err = e.Config.Open(ctx, adapters.OpenOptions{Env: env}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { engines[name].Close() })
	}
	startAgain(ctx, t, testenv.As[*sfn.Client](t, engines["aws-ids"]), ids)

	keys, err := token.ParseKeys(ids.TokenKeys)
	if err != nil {
		t.Fatal(err)
	}
	sealed, _ := token.NewSealed(keys)
	codecs := map[string]token.Codec{"sealed": sealed, "native": token.Native{Refs: set}}
	clients := map[string]*rpctest.Client{}
	for format, codec := range codecs {
		srv, _ := newServer(t, tasks.Config{Mapping: set, Engines: engines, Tokens: codec}, mcpserver.Config{})
		hs := httptest.NewServer(srv.HTTPHandler())
		t.Cleanup(hs.Close)
		clients[format] = rpctest.Modern(rpctest.HTTP{URL: hs.URL}, ext)
	}

	for _, id := range ids.IDs {
		if id.Format == "native" {
			_, rerr := clients[id.Format].Call(t, "tasks/get", map[string]any{"taskId": id.ID})
			wantError(t, "a native id of "+id.Tool+" with no MAC", rerr, -32602, "Failed to retrieve task: Task not found")
			continue
		}
		got := clients[id.Format].Decode(t, "tasks/get", map[string]any{"taskId": id.ID})
		text, _ := got["result"].(map[string]any)["structuredContent"].(map[string]any)["text"].(string)
		if got["status"] != "completed" || text != id.Text {
			t.Errorf("%s id of %s: tasks/get = %v, want completed with the text %q", id.Format, id.Tool, got, id.Text)
		}
	}

	// The sealed Temporal id opens to the workflow run the native one of its time was written as.
	for _, id := range ids.IDs {
		if id.Format != "sealed" || id.Tool != "issued_echo" {
			continue
		}
		claims, err := sealed.Open(id.ID, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		wf, run, ok := temporal.WorkflowOf(claims.Ref)
		if !ok || run == "" {
			t.Fatalf("the sealed id of %s opens to %v: want a workflow id and run id", id.Tool, claims.Ref)
		}
		d, err := dev.Client().DescribeWorkflow(ctx, wf, run)
		if err != nil || d.RawResponse.GetWorkflowExecutionInfo().GetExecution().GetRunId() != run {
			t.Errorf("workflow %s run %s: %v, %v", wf, run, d, err)
		}
	}
}

// unzip writes the gzipped file to a temporary folder and returns the path of the copy.
func unzip(t *testing.T, name string) string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(name[:len(name)-len(".gz")]))
	w, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, zr); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// startAgain starts the Step Functions executions of ids under their names and input (the same
// ARNs), unless the endpoint already has them, and waits until they have succeeded.
func startAgain(ctx context.Context, t *testing.T, c *sfn.Client, ids issued) {
	t.Helper()
	arns, err := sfnexamples.Ensure(ctx, c, "arn:aws:iam::123456789012:role/taskgate-examples")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids.IDs {
		if id.ExecutionARN == "" {
			continue
		}
		_, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(arns[sfnexamples.WaitAndEcho]),
			Name: aws.String(id.ExecutionName), Input: aws.String(id.Input)})
		var exists *types.ExecutionAlreadyExists
		if err != nil && !errors.As(err, &exists) {
			t.Fatal(err)
		}
		for {
			d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(id.ExecutionARN)})
			if err != nil {
				t.Fatalf("execution %s: %v", id.ExecutionARN, err)
			}
			if d.Status == types.ExecutionStatusSucceeded {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
