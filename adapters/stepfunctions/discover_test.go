package stepfunctions_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/taskgate/taskgate/adapters/stepfunctions"
)

// passDefinition is a one-state definition with the given Comment.
func passDefinition(t *testing.T, comment string) string {
	t.Helper()
	return string(mustJSON(t, map[string]any{
		"Comment": comment,
		"StartAt": "Done",
		"States":  map[string]any{"Done": map[string]any{"Type": "Pass", "End": true}},
	}))
}

func createMachine(t *testing.T, c *sfn.Client, name, definition string, tags map[string]string) string {
	t.Helper()
	in := &sfn.CreateStateMachineInput{Name: aws.String(name), Definition: aws.String(definition), RoleArn: aws.String(testRole)}
	for k, v := range tags {
		in.Tags = append(in.Tags, types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	out, err := c.CreateStateMachine(t.Context(), in)
	if err != nil {
		t.Fatalf("creating state machine %s: %v", name, err)
	}
	return aws.ToString(out.StateMachineArn)
}

// TestDiscover creates more state machines than one ListStateMachines page holds (100 on AWS and
// on moto) and checks that Discover reads them all.
func TestDiscover(t *testing.T) {
	ctx := testContext(t)
	c := &calls{}
	sc := sfnClient(t, newEngine(t, c))
	run := randomHex(4)
	prefix := "taskgate-disc-" + run + "-"
	const n = 105
	team := map[string]string{"team": "orders-" + run}
	const schema = `{"type":"object","properties":{"sku":{"type":"string"}},"required":["sku"]}`
	arns := make([]string, n)
	for i := range n {
		name := fmt.Sprintf("%s%03d", prefix, i)
		comment, tags := "Plain state machine.", map[string]string{}
		switch i {
		case 0:
			tags = map[string]string{"description": "Reserves stock.", "taskgate:inputSchema": schema}
			comment = "A comment the description tag overrides."
		case 1:
			comment = "Ships an order. taskgate:inputSchema " + schema + " (more text)"
		}
		if i%10 == 0 {
			tags["team"] = team["team"]
		}
		arns[i] = createMachine(t, sc, name, passDefinition(t, comment), tags)
	}
	createMachine(t, sc, "taskgate-other-"+run, passDefinition(t, ""), team)

	before := c.count("ListStateMachines")
	all, err := stepfunctions.Discover(ctx, sc, prefix, nil)
	if err != nil {
		t.Fatalf("Discover(%q, nil): %v", prefix, err)
	}
	if pages := c.count("ListStateMachines") - before; pages < 2 {
		t.Errorf("Discover read %d page(s) of ListStateMachines for more than 100 state machines, want at least 2", pages)
	}
	if len(all) != n {
		t.Fatalf("Discover(%q, nil) found %d state machines, want %d", prefix, len(all), n)
	}
	for i, d := range all {
		if d.ARN != arns[i] || d.Name != fmt.Sprintf("%s%03d", prefix, i) || d.Type != "STANDARD" {
			t.Errorf("Discover result %d: %s %s %s, want %s, STANDARD, in name order", i, d.Name, d.ARN, d.Type, arns[i])
		}
	}
	checkDiscovered := func(i int, desc, schema string) {
		t.Helper()
		d := all[i]
		if d.Description != desc || string(d.InputSchema) != schema || (schema == "" && d.InputSchema != nil) {
			t.Errorf("%s: description %q, schema %s; want %q, %s", d.Name, d.Description, d.InputSchema, desc, schema)
		}
	}
	checkDiscovered(0, "Reserves stock.", schema)
	checkDiscovered(1, "Ships an order.", schema)
	checkDiscovered(2, "Plain state machine.", "")

	tagged, err := stepfunctions.Discover(ctx, sc, prefix, team)
	if err != nil {
		t.Fatalf("Discover with tags: %v", err)
	}
	var names []string
	for _, d := range tagged {
		names = append(names, strings.TrimPrefix(d.Name, prefix))
	}
	if got, want := strings.Join(names, " "), "000 010 020 030 040 050 060 070 080 090 100"; got != want {
		t.Errorf("Discover(%q, %v) found %s, want %s", prefix, team, got, want)
	}
	if none, err := stepfunctions.Discover(ctx, sc, prefix, map[string]string{"team": "nobody"}); err != nil || len(none) != 0 {
		t.Errorf("Discover with a tag value nobody has: %d found, %v; want none", len(none), err)
	}
}

func TestDiscoverBadSchema(t *testing.T) {
	ctx := testContext(t)
	sc := sfnClient(t, newEngine(t, nil))
	run := randomHex(4)
	tests := []struct {
		name, comment string
		tags          map[string]string
		want          string
	}{
		{
			"tag", "", map[string]string{"taskgate:inputSchema": `["sku"]`},
			`tag taskgate:inputSchema: want a JSON object (a JSON Schema such as {"type":"object"}), got "[\"sku\"]"`,
		},
		{
			"comment", `Ships. taskgate:inputSchema {"type":`, nil,
			"definition Comment: taskgate:inputSchema must be followed by a JSON Schema object: unexpected EOF",
		},
		{
			"comment-null", `Ships. taskgate:inputSchema null`, nil,
			`definition Comment: taskgate:inputSchema: want a JSON object (a JSON Schema such as {"type":"object"}), got "null"`,
		},
	}
	for _, tc := range tests {
		prefix := "taskgate-bad-" + run + "-" + tc.name
		arn := createMachine(t, sc, prefix, passDefinition(t, tc.comment), tc.tags)
		_, err := stepfunctions.Discover(ctx, sc, prefix, nil)
		if want := "state machine " + arn + ": " + tc.want; err == nil || err.Error() != want {
			t.Errorf("Discover of a state machine with a bad schema in its %s: error %v\nwant %s", tc.name, err, want)
		}
	}
}

func TestDiscoverSchemaIsJSON(t *testing.T) {
	ctx := testContext(t)
	sc := sfnClient(t, newEngine(t, nil))
	name := "taskgate-schema-" + randomHex(4)
	createMachine(t, sc, name, passDefinition(t, `taskgate:inputSchema {"type": "object"}`), nil)
	found, err := stepfunctions.Discover(ctx, sc, name, nil)
	if err != nil || len(found) != 1 {
		t.Fatalf("Discover: %v, %v", found, err)
	}
	var v map[string]any
	if err := json.Unmarshal(found[0].InputSchema, &v); err != nil || v["type"] != "object" || found[0].Description != "" {
		t.Errorf("Discover: schema %s, description %q; want the object and no description", found[0].InputSchema, found[0].Description)
	}
}
