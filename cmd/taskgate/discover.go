package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/taskgate/taskgate/adapters/stepfunctions"
)

// runDiscover drafts a mapping file from the state machines of an account: one tool each.
func runDiscover(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "stepfunctions" {
		return usageError{"usage: taskgate discover stepfunctions [--region R] [--endpoint URL] [--role-arn ARN] [--prefix NAME] [--tag KEY=VALUE]... [--out FILE]"}
	}
	fs := flag.NewFlagSet("discover stepfunctions", flag.ContinueOnError)
	fs.SetOutput(stderr)
	region := fs.String("region", os.Getenv("AWS_REGION"), "AWS region (default $AWS_REGION)")
	endpoint := fs.String("endpoint", "", "a Step Functions-compatible endpoint URL")
	role := fs.String("role-arn", "", "a role to assume (cross-account)")
	prefix := fs.String("prefix", "", "only state machines whose name starts with this")
	out := fs.String("out", "", "write the draft to this file instead of standard output")
	var tagFlags listFlag
	fs.Var(&tagFlags, "tag", "only state machines with this tag KEY=VALUE (repeatable)")
	if err := fs.Parse(args[1:]); err != nil {
		return usageError{err.Error()}
	}
	if *region == "" {
		return usageError{"discover needs --region or AWS_REGION"}
	}
	tags := map[string]string{}
	for _, kv := range tagFlags {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usageError{fmt.Sprintf("--tag %q: want KEY=VALUE", kv)}
		}
		tags[k] = v
	}
	engine, err := stepfunctions.New(ctx, stepfunctions.Config{Region: *region, Endpoint: *endpoint, RoleARN: *role})
	if err != nil {
		return err
	}
	found, err := engine.Discover(ctx, *prefix, tags)
	if err != nil {
		return err
	}
	if len(found) == 0 {
		return fmt.Errorf("no state machine in %s matches (prefix %q, tags %v)", *region, *prefix, tags)
	}
	w := stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	return writeDraft(w, stderr, found, *region, *endpoint, *role)
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

func writeDraft(w, warn io.Writer, found []stepfunctions.Discovered, region, endpoint, role string) error {
	var b strings.Builder
	b.WriteString("# Drafted by `taskgate discover stepfunctions`. Review every tool (names, descriptions,\n")
	b.WriteString("# input schemas) and check the result with `taskgate validate` before serving it.\n")
	b.WriteString("version: 1\nengines:\n  aws:\n    stepfunctions:\n")
	fmt.Fprintf(&b, "      region: %s\n", quote(region))
	if endpoint != "" {
		fmt.Fprintf(&b, "      endpoint: %s\n", quote(endpoint))
	}
	if role != "" {
		fmt.Fprintf(&b, "      roleArn: %s\n", quote(role))
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
