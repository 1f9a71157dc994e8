package stepfunctions

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/taskgate/taskgate/adapters/draft"
	"github.com/taskgate/taskgate/adapters/driver"
)

var _ driver.Discoverer = Driver{}

// tagFlag collects KEY=VALUE flags.
type tagFlag map[string]string

func (t tagFlag) String() string {
	var kv []string
	for k, v := range t {
		kv = append(kv, k+"="+v)
	}
	return strings.Join(kv, ",")
}

func (t tagFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return errors.New("want KEY=VALUE")
	}
	t[k] = v
	return nil
}

// Discover serves `taskgate discover stepfunctions`: it drafts a mapping file with one tool per
// state machine of an account (all pages), the description from the tag "description" or the
// definition's Comment, the input schema from the tag "taskgate:inputSchema" or
// "taskgate:inputSchema {...}" in the Comment (else an open object, with a warning).
func (Driver) Discover(fs *flag.FlagSet) func(ctx context.Context, w, warn io.Writer) error {
	var cfg Config
	fs.StringVar(&cfg.Region, "region", "", "AWS region (default: the AWS chain's, like AWS_REGION)")
	fs.StringVar(&cfg.Endpoint, "endpoint", "", "a Step Functions-compatible endpoint URL")
	fs.StringVar(&cfg.RoleARN, "role-arn", "", "a role to assume (cross-account)")
	prefix := fs.String("prefix", "", "only state machines whose name starts with this")
	tags := tagFlag{}
	fs.Var(tags, "tag", "only state machines with this tag `KEY=VALUE` (repeatable)")
	infer := draft.InferFlags(fs)
	return func(ctx context.Context, w, warn io.Writer) error {
		e, err := newConn(ctx, cfg)
		if err != nil {
			return err
		}
		found, err := Discover(ctx, e.client, *prefix, tags)
		if err != nil {
			return err
		}
		if len(found) == 0 {
			return fmt.Errorf("no state machine in %s matches (prefix %q, tags %v)", e.region, *prefix, map[string]string(tags))
		}
		samples, err := e.samplesOf(ctx, warn, found, infer.Executions)
		if err != nil {
			return err
		}
		cfg.Region = e.region
		return writeDraft(w, warn, found, samples, *infer, cfg)
	}
}

// samplesOf reads the inputs of the n latest executions of each state machine, by ARN; an
// Express state machine's cannot be read, which warn says.
func (e *conn) samplesOf(ctx context.Context, warn io.Writer, found []Discovered, n int) (map[string][]json.RawMessage, error) {
	samples := map[string][]json.RawMessage{}
	for _, d := range found {
		if n == 0 {
			break
		}
		if d.Type == string(types.StateMachineTypeExpress) {
			fmt.Fprintf(warn, "taskgate: warning: %s is an Express state machine: Step Functions lists none of its executions, so --infer has no input to read\n", d.Name)
			continue
		}
		t, err := StateMachine(d.ARN)
		if err != nil {
			return nil, err
		}
		if samples[d.ARN], err = draft.Sample(ctx, e, t, n); err != nil {
			return nil, err
		}
	}
	return samples, nil
}

var notToolChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// toolName turns a state machine name into a unique tool name.
func toolName(name string, taken map[string]bool) string {
	base := strings.Trim(notToolChars.ReplaceAllString(name, "_"), "_")
	if base == "" {
		base = "state_machine"
	}
	if len(base) > 60 {
		base = base[:60]
	}
	n := base
	for i := 2; taken[n]; i++ {
		n = fmt.Sprintf("%s_%d", base, i)
	}
	taken[n] = true
	return n
}

func writeDraft(w, warn io.Writer, found []Discovered, samples map[string][]json.RawMessage, infer draft.Inference, cfg Config) error {
	var b strings.Builder
	b.WriteString("# Drafted by `taskgate discover stepfunctions`. Review every tool (names, descriptions,\n")
	b.WriteString("# input schemas) and check the result with `taskgate validate` before serving it.\n")
	b.WriteString("version: 1\nengines:\n  aws:\n    stepfunctions:\n")
	fmt.Fprintf(&b, "      region: %s\n", draft.Quote(cfg.Region))
	if cfg.Endpoint != "" {
		fmt.Fprintf(&b, "      endpoint: %s\n", draft.Quote(cfg.Endpoint))
	}
	if cfg.RoleARN != "" {
		fmt.Fprintf(&b, "      roleArn: %s\n", draft.Quote(cfg.RoleARN))
	}
	b.WriteString("tools:\n")
	taken := map[string]bool{}
	for _, d := range found {
		name := toolName(d.Name, taken)
		desc := d.Description
		if desc == "" {
			desc = "Runs the Step Functions state machine " + d.Name + "."
			fmt.Fprintf(warn, "taskgate: warning: %s has no description: the draft says only what it runs (tag it \"description\")\n", d.Name)
		}
		fmt.Fprintf(&b, "  - name: %s\n    description: %s\n    engine: aws\n    stateMachine: %s\n", name, draft.Quote(desc), draft.Quote(d.ARN))
		if d.Type == "EXPRESS" {
			b.WriteString("    taskSupport: forbidden   # Express executions cannot be described later\n")
		}
		in := draft.Schema{Declared: d.InputSchema, DeclaredBy: d.SchemaFrom, Inference: infer, Samples: samples[d.ARN], Missing: "has no input schema",
			Hint: " (tag it taskgate:inputSchema, or put `taskgate:inputSchema {...}` in its Comment)"}
		if err := in.Write(&b, warn, d.Name); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
