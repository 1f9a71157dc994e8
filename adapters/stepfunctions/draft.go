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

	"github.com/taskgate/taskgate/adapters"
)

var _ adapters.Discoverer = Driver{}

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
	return func(ctx context.Context, w, warn io.Writer) error {
		e, err := New(ctx, cfg)
		if err != nil {
			return err
		}
		found, err := e.Discover(ctx, *prefix, tags)
		if err != nil {
			return err
		}
		if len(found) == 0 {
			return fmt.Errorf("no state machine in %s matches (prefix %q, tags %v)", e.region, *prefix, map[string]string(tags))
		}
		cfg.Region = e.region
		return writeDraft(w, warn, found, cfg)
	}
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

// quote writes a string as a YAML scalar: JSON strings are valid YAML.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func writeDraft(w, warn io.Writer, found []Discovered, cfg Config) error {
	var b strings.Builder
	b.WriteString("# Drafted by `taskgate discover stepfunctions`. Review every tool (names, descriptions,\n")
	b.WriteString("# input schemas) and check the result with `taskgate validate` before serving it.\n")
	b.WriteString("version: 1\nengines:\n  aws:\n    stepfunctions:\n")
	fmt.Fprintf(&b, "      region: %s\n", quote(cfg.Region))
	if cfg.Endpoint != "" {
		fmt.Fprintf(&b, "      endpoint: %s\n", quote(cfg.Endpoint))
	}
	if cfg.RoleARN != "" {
		fmt.Fprintf(&b, "      roleArn: %s\n", quote(cfg.RoleARN))
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
		schema := d.InputSchema
		if schema == nil {
			schema = json.RawMessage(`{"type":"object"}`)
			fmt.Fprintf(warn, "taskgate: warning: %s has no input schema: the draft accepts any object (tag it taskgate:inputSchema, or put `taskgate:inputSchema {...}` in its Comment)\n", d.Name)
		}
		compact, err := json.Marshal(schema)
		if err != nil {
			return fmt.Errorf("%s: input schema: %w", d.Name, err)
		}
		fmt.Fprintf(&b, "  - name: %s\n    description: %s\n    engine: aws\n    stateMachine: %s\n", name, quote(desc), quote(d.ARN))
		if d.Type == "EXPRESS" {
			b.WriteString("    taskSupport: forbidden   # Express executions cannot be described later\n")
		}
		fmt.Fprintf(&b, "    inputSchema: %s\n", compact)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
