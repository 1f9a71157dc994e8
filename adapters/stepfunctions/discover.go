package stepfunctions

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

const (
	// descriptionTag, when set on a state machine, is its tool description.
	descriptionTag = "description"
	// schemaMarker introduces an input schema, as a tag key or inside the definition's Comment:
	// "Comment": "Echoes a text. taskgate:inputSchema {\"type\":\"object\", ...}".
	schemaMarker = "taskgate:inputSchema"
)

// Discovered is one state machine that Discover found.
type Discovered struct {
	Name string
	ARN  string
	// Type is "STANDARD" or "EXPRESS".
	Type string
	// Description is the tag "description", else the definition's Comment (without any schema).
	Description string
	// InputSchema is the JSON Schema of the input, from the tag "taskgate:inputSchema" or from
	// "taskgate:inputSchema {...}" in the definition's Comment; nil when neither has one.
	// SchemaFrom says which: "the tag taskgate:inputSchema" or "the definition's Comment".
	InputSchema json.RawMessage
	SchemaFrom  string
}

// Discover lists the state machines whose name starts with prefix and that carry every tag in
// tags with the same value, sorted by name, with c (a Conn's, through its As). It reads every page
// of ListStateMachines, the tags of each state machine the prefix selects, and the definition of
// those whose tags do not already give a description and a schema.
func Discover(ctx context.Context, c *sfn.Client, prefix string, tags map[string]string) ([]Discovered, error) {
	var found []Discovered
	pages := sfn.NewListStateMachinesPaginator(c, &sfn.ListStateMachinesInput{})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, apiError("listing state machines", err)
		}
		for _, sm := range page.StateMachines {
			if !strings.HasPrefix(aws.ToString(sm.Name), prefix) {
				continue
			}
			d, ok, err := discover(ctx, c, sm, tags)
			if err != nil {
				return nil, err
			}
			if ok {
				found = append(found, d)
			}
		}
	}
	slices.SortFunc(found, func(a, b Discovered) int { return strings.Compare(a.Name, b.Name) })
	return found, nil
}

func discover(ctx context.Context, c *sfn.Client, sm types.StateMachineListItem, want map[string]string) (Discovered, bool, error) {
	d := Discovered{Name: aws.ToString(sm.Name), ARN: aws.ToString(sm.StateMachineArn), Type: string(sm.Type)}
	t, err := c.ListTagsForResource(ctx, &sfn.ListTagsForResourceInput{ResourceArn: sm.StateMachineArn})
	if err != nil {
		return Discovered{}, false, apiError("reading the tags of state machine "+d.ARN, err)
	}
	tags := make(map[string]string, len(t.Tags))
	for _, tag := range t.Tags {
		tags[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
	}
	for k, v := range want {
		if got, ok := tags[k]; !ok || got != v {
			return Discovered{}, false, nil
		}
	}
	d.Description = tags[descriptionTag]
	if s, ok := tags[schemaMarker]; ok {
		if d.InputSchema, err = schemaObject([]byte(s)); err != nil {
			return Discovered{}, false, fmt.Errorf("state machine %s: tag %s: %w", d.ARN, schemaMarker, err)
		}
		d.SchemaFrom = "the tag " + schemaMarker
	}
	if d.Type != "" && d.Description != "" && d.InputSchema != nil {
		return d, true, nil
	}
	out, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: sm.StateMachineArn})
	if err != nil {
		return Discovered{}, false, apiError("reading state machine "+d.ARN, err)
	}
	d.Type = string(out.Type)
	var def struct{ Comment string }
	if err := json.Unmarshal([]byte(aws.ToString(out.Definition)), &def); err != nil {
		return Discovered{}, false, fmt.Errorf("state machine %s: its definition is not JSON: %w", d.ARN, err)
	}
	text, schema, err := parseComment(def.Comment)
	if err != nil {
		return Discovered{}, false, fmt.Errorf("state machine %s: definition Comment: %w", d.ARN, err)
	}
	if d.Description == "" {
		d.Description = text
	}
	if d.InputSchema == nil && schema != nil {
		d.InputSchema, d.SchemaFrom = schema, "the definition's Comment"
	}
	return d, true, nil
}

// parseComment splits a definition Comment into its text and the schema after schemaMarker.
func parseComment(c string) (text string, schema json.RawMessage, err error) {
	i := strings.Index(c, schemaMarker)
	if i < 0 {
		return strings.TrimSpace(c), nil, nil
	}
	var raw json.RawMessage
	if err := json.NewDecoder(strings.NewReader(c[i+len(schemaMarker):])).Decode(&raw); err != nil {
		return "", nil, fmt.Errorf("%s must be followed by a JSON Schema object: %w", schemaMarker, err)
	}
	if schema, err = schemaObject(raw); err != nil {
		return "", nil, fmt.Errorf("%s: %w", schemaMarker, err)
	}
	return strings.TrimSpace(c[:i]), schema, nil
}

// schemaObject checks that s is one JSON object.
func schemaObject(s []byte) (json.RawMessage, error) {
	var obj map[string]any
	if err := json.Unmarshal(s, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("want a JSON object (a JSON Schema such as {\"type\":\"object\"}), got %q", s)
	}
	return json.RawMessage(s), nil
}
