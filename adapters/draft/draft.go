// Package draft is what the drivers' `taskgate discover` commands share when they write a draft
// mapping file: tool names, YAML scalars, and a tool's input schema, the one its target declares
// or one inferred from the inputs of its latest executions (--infer N, with --enums).
package draft

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/internal/schemainfer"
)

// Quote writes a string as a YAML scalar: JSON strings are valid YAML.
func Quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

var (
	wordStart  = regexp.MustCompile(`([a-z0-9])([A-Z])`)
	notToolRun = regexp.MustCompile(`[^a-z0-9]+`)
)

// SnakeName turns a name like OrderService_shipIt into a tool name like order_service_ship_it,
// unique among taken (a number appended), and marks it taken.
func SnakeName(name string, taken map[string]bool) string {
	base := strings.Trim(notToolRun.ReplaceAllString(strings.ToLower(wordStart.ReplaceAllString(name, "${1}_${2}")), "_"), "_")
	if base == "" {
		base = "tool"
	}
	n := base
	for i := 2; taken[n]; i++ {
		n = fmt.Sprintf("%s_%d", base, i)
	}
	taken[n] = true
	return n
}

// MaxInfer is the most executions --infer reads per target.
const MaxInfer = 1000

type inferFlag int

func (n *inferFlag) String() string { return strconv.Itoa(int(*n)) }

func (n *inferFlag) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 || v > MaxInfer {
		return fmt.Errorf("want a number of executions from 1 to %d", MaxInfer)
	}
	*n = inferFlag(v)
	return nil
}

// Inference is what a draft may learn from the inputs of the latest executions.
type Inference struct {
	// Executions is how many of each target's latest executions to infer its input schema from
	// (--infer N), 0 for none.
	Executions int
	// Enums lets the inferred schema list a closed set of strings the inputs show as an enum
	// (--enums); without it, no input's value goes into the draft.
	Enums bool
}

// InferFlags declares --infer N and --enums on fs.
func InferFlags(fs *flag.FlagSet) *Inference {
	i := &Inference{}
	fs.Var((*inferFlag)(&i.Executions), "infer", "infer each input schema the engine does not declare from the inputs of the latest `N` executions (read, never logged)")
	fs.BoolVar(&i.Enums, "enums", false, "with --infer, list a closed set of strings the inputs show as an enum, unless a name or a value there could be a secret (every caller sees an enum)")
	return i
}

// Sample reads the inputs of n of t's latest executions, through e when it is an
// driver.Sampler; none when n is 0.
func Sample(ctx context.Context, e adapters.Conn, t adapters.Target, n int) ([]json.RawMessage, error) {
	if n <= 0 {
		return nil, nil
	}
	s, ok := e.(driver.Sampler)
	if !ok {
		return nil, errors.New("this engine cannot read the inputs of its executions")
	}
	return s.Samples(ctx, t, n)
}

// Schema is what a draft knows of one tool's input.
type Schema struct {
	// Declared is the JSON Schema the target declares, nil when none; DeclaredBy says where it
	// comes from, like "the tag taskgate:inputSchema".
	Declared   json.RawMessage
	DeclaredBy string
	// Inference is what --infer and --enums asked, and Samples the inputs --infer read.
	Inference Inference
	Samples   []json.RawMessage
	// Missing says what the target lacks when the draft can only accept any object, like "has no
	// input schema", and Hint what to do about it (may be empty).
	Missing, Hint string
}

// Write writes the tool's inputSchema (and input: .input when the schema is not an object's: a
// tool's arguments are one, which hands the target its input property) with a comment on where it
// came from, and one line for each place an inferred schema leaves open, saying why. A declared
// schema wins over an inferred one, unless all it says is "any object" (as an SDK declares for a
// map), which is no schema at all; with neither, the draft accepts any object, and warn says so.
// what names the target in warnings.
func (s Schema) Write(b *strings.Builder, warn io.Writer, what string) error {
	schema, comment := s.Declared, ""
	var open []schemainfer.Open
	if anyObject(schema) {
		schema = nil
	}
	switch n := len(s.Samples); {
	case schema != nil && n > 0:
		comment = fmt.Sprintf("from %s, which wins over the schema inferred from %s", s.DeclaredBy, inputs(n))
	case schema != nil:
	case n > 0:
		var err error
		if schema, open, err = schemainfer.Infer(s.Samples, schemainfer.Options{Enums: s.Inference.Enums}); err != nil {
			return fmt.Errorf("%s: inferring the input schema: %w", what, err)
		}
		comment = fmt.Sprintf("inferred from the %s: review it", latest(n))
	default:
		schema = json.RawMessage(`{"type":"object"}`)
		missing := s.Missing
		if s.Inference.Executions > 0 {
			missing += " and no execution to infer one from"
		}
		fmt.Fprintf(warn, "taskgate: warning: %s %s: the draft accepts any object%s\n", what, missing, s.Hint)
	}
	schema, wrapped, err := Arguments(schema)
	if err != nil {
		return fmt.Errorf("%s: input schema: %w", what, err)
	}
	if wrapped {
		b.WriteString("    input: .input\n")
	}
	fmt.Fprintf(b, "    inputSchema: %s", schema)
	if comment != "" {
		b.WriteString("   # " + comment)
	}
	b.WriteString("\n")
	for _, o := range open {
		fmt.Fprintf(b, "    # input%s: %s\n", o.Path, leftOpen[o.Reason])
	}
	return nil
}

// leftOpen says why an inferred schema leaves a place open.
var leftOpen = map[schemainfer.Reason]string{
	schemainfer.EnumsOff:    "no enum: pass --enums to draft enums from samples",
	schemainfer.SecretName:  "no enum: its name reads as a secret",
	schemainfer.LongValue:   fmt.Sprintf("no enum: a value is longer than %d characters", schemainfer.MaxEnumLength),
	schemainfer.RandomValue: "no enum: a value looks like a random token",
	schemainfer.SecretKeys:  fmt.Sprintf("property names left out: longer than %d characters, or random-looking", schemainfer.MaxEnumLength),
}

func inputs(n int) string {
	if n == 1 {
		return "1 input"
	}
	return strconv.Itoa(n) + " inputs"
}

func latest(n int) string {
	if n == 1 {
		return "latest input"
	}
	return strconv.Itoa(n) + " latest inputs"
}

// Arguments is the tool's input schema for a target's: the same, compacted, when it is an
// object's; else an object of one required property, input, that holds it (wrapped).
func Arguments(s json.RawMessage) (schema json.RawMessage, wrapped bool, err error) {
	var c bytes.Buffer
	if err := json.Compact(&c, s); err != nil {
		return nil, false, err
	}
	if IsObject(c.Bytes()) {
		return c.Bytes(), false, nil
	}
	out, err := json.Marshal(map[string]any{"type": "object", "properties": map[string]json.RawMessage{"input": c.Bytes()}, "required": []string{"input"}})
	return out, true, err
}

// anyObject reports whether s accepts every object and says nothing else: {"type": "object"},
// perhaps with "additionalProperties": true.
func anyObject(s json.RawMessage) bool {
	var m map[string]any
	if json.Unmarshal(s, &m) != nil || m["type"] != "object" {
		return false
	}
	delete(m, "type")
	if m["additionalProperties"] == true {
		delete(m, "additionalProperties")
	}
	return len(m) == 0
}

// IsObject reports whether s is the schema of an object: its type is "object".
func IsObject(s json.RawMessage) bool {
	var m struct {
		Type any `json:"type"`
	}
	return s != nil && json.Unmarshal(s, &m) == nil && m.Type == "object"
}
