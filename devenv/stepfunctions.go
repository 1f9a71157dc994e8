package devenv

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
)

// ensureSFNExamples creates (or updates) the example state machines in the endpoint and adds the
// mapping file that serves them, with what that file and its engine read.
func (e *Env) ensureSFNExamples(ctx context.Context, o Options) error {
	env := e.Env
	if region, _ := env.LookupEnv("AWS_REGION"); region == "" {
		env = env.With("AWS_REGION=us-east-1")
	}
	id, _ := env.LookupEnv("AWS_ACCESS_KEY_ID")
	profile, _ := env.LookupEnv("AWS_PROFILE")
	if id == "" && profile == "" {
		// Local emulators accept any credentials; real endpoints get the standard chain.
		env = env.With("AWS_ACCESS_KEY_ID=taskgate-dev", "AWS_SECRET_ACCESS_KEY=taskgate-dev")
	}
	engine, err := stepfunctions.New(ctx, stepfunctions.Config{Endpoint: o.SFNEndpoint, Env: env})
	if err != nil {
		return err
	}
	var client *sfn.Client
	driver.As(engine, &client)
	arns, err := sfnexamples.Ensure(ctx, client, o.SFNRole)
	if err != nil {
		return fmt.Errorf("creating the Step Functions examples in %s: %w", o.SFNEndpoint, err)
	}
	env = env.With("SFN_ENDPOINT=" + o.SFNEndpoint)
	// The mapping names the machines by ARN: take the account from one the endpoint gave.
	if parts := strings.Split(arns[sfnexamples.WaitAndEcho], ":"); len(parts) > 4 {
		env = env.With("SFN_ACCOUNT=" + parts[4])
	}
	fmt.Fprintf(o.Log, "taskgate: %d Step Functions example state machines ready in %s\n", len(arns), o.SFNEndpoint)
	f := filepath.Join(e.Dir, "stepfunctions-tools.yaml")
	if err := writeAtomically(f, sfnexamples.Mapping); err != nil {
		return err
	}
	e.Env, e.Mappings = env, append(e.Mappings, f)
	return nil
}
