package mapping

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	errkind "github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// The kinds of InputFinding.
const (
	// InputMissing: a field the inputSchema requires that inputs lack.
	InputMissing = "missing"
	// InputType: a field whose type is not the one the inputSchema says.
	InputType = "type"
	// InputForbidden: a field the inputSchema does not allow (additionalProperties: false) that
	// inputs send.
	InputForbidden = "forbidden"
	// InputInvalid: any other rule of the inputSchema that inputs break (an enum, a bound), or an
	// input that is not JSON.
	InputInvalid = "invalid"
)

// InputFinding is one way in which engine inputs that ran do not fit a tool's inputSchema.
type InputFinding struct {
	// Kind is InputMissing, InputType, InputForbidden or InputInvalid.
	Kind string `json:"kind"`
	// Field is the field's path, like "region", "options.mode" or "tags[2]"; empty for the input
	// as a whole.
	Field string `json:"field"`
	// Count is how many of the inputs show it, of Of.
	Count int `json:"count"`
	Of    int `json:"of"`
	// Want is the type the schema says and Got the types the inputs send (InputType); Rule is the
	// rule broken, in words (InputInvalid).
	Want string   `json:"want,omitempty"`
	Got  []string `json:"got,omitempty"`
	Rule string   `json:"rule,omitempty"`
}

// String says what was found, naming the field.
func (f InputFinding) String() string {
	field := "the input"
	if f.Field != "" {
		field = fmt.Sprintf("field %q", f.Field)
	}
	some := fmt.Sprintf("%d of %d recent inputs", f.Count, f.Of)
	switch f.Kind {
	case InputMissing:
		return fmt.Sprintf("%s is required by the inputSchema, but %s lack it", field, some)
	case InputType:
		return fmt.Sprintf("%s is %s in the inputSchema, but %s send %s", field, f.Want, some, strings.Join(f.Got, " or "))
	case InputForbidden:
		return fmt.Sprintf("%s is not allowed by the inputSchema (additionalProperties), but %s send it", field, some)
	}
	return fmt.Sprintf("%s breaks the inputSchema in %s: %s", field, some, f.Rule)
}

// InputsComparable says why the engine inputs of t cannot be checked against its inputSchema, or
// nil when they can: when the tool hands its arguments to the engine unchanged.
func (t *Tool) InputsComparable() error {
	if t.Input != nil && strings.TrimSpace(t.Input.Source) != "." {
		return fmt.Errorf("its input: program turns the arguments into another engine input, so what runs is not what the inputSchema describes")
	}
	if t.inputSchema == nil {
		return fmt.Errorf("it was not read from a mapping file, so it has no compiled inputSchema")
	}
	return nil
}

// InputDrift checks engine inputs that ran (each a JSON value) against the tool's inputSchema and
// says, field by field, how many of them do not fit and how: sorted by field, then kind. The
// answers to the tool's questions, which a start joins to the arguments, are allowed beside them.
// Call it only when InputsComparable is nil.
func (t *Tool) InputDrift(inputs []json.RawMessage) []InputFinding {
	type key struct{ kind, field, rule string }
	found := map[key]*InputFinding{}
	for _, in := range inputs {
		seen := map[key]bool{}
		for _, f := range t.misfits(in) {
			k := key{f.Kind, f.Field, f.Rule}
			g, ok := found[k]
			if !ok {
				g = &InputFinding{Kind: f.Kind, Field: f.Field, Want: f.Want, Rule: f.Rule, Of: len(inputs)}
				found[k] = g
			}
			if !seen[k] {
				seen[k] = true
				g.Count++
			}
			for _, got := range f.Got {
				if !slices.Contains(g.Got, got) {
					g.Got = append(g.Got, got)
				}
			}
		}
	}
	findings := make([]InputFinding, 0, len(found))
	for _, f := range found {
		slices.Sort(f.Got)
		findings = append(findings, *f)
	}
	slices.SortFunc(findings, func(a, b InputFinding) int {
		return cmp.Or(strings.Compare(a.Field, b.Field), strings.Compare(a.Kind, b.Kind), strings.Compare(a.Rule, b.Rule))
	})
	return findings
}

// misfits are the ways one input does not fit the inputSchema, each counted once.
func (t *Tool) misfits(input json.RawMessage) []InputFinding {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(input))
	if err != nil {
		return []InputFinding{{Kind: InputInvalid, Rule: "it is not valid JSON"}}
	}
	err = t.inputSchema.Validate(v)
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		if err != nil {
			return []InputFinding{{Kind: InputInvalid, Rule: err.Error()}}
		}
		return nil
	}
	asked := map[string]bool{}
	for _, q := range t.Ask {
		asked[q.Key] = true
	}
	var fs []InputFinding
	for _, leaf := range leaves(ve, nil) {
		fs = append(fs, t.misfit(leaf, v, asked)...)
	}
	return fs
}

// misfit words one failed keyword of the schema as findings.
func (t *Tool) misfit(ve *jsonschema.ValidationError, v any, asked map[string]bool) []InputFinding {
	path, at := argumentPath(v, ve.InstanceLocation)
	var fs []InputFinding
	switch k := ve.ErrorKind.(type) {
	case *errkind.Required:
		for _, name := range k.Missing {
			fs = append(fs, InputFinding{Kind: InputMissing, Field: join(path, name)})
		}
	case *errkind.AdditionalProperties:
		for _, name := range k.Properties {
			if path == "" && asked[name] {
				continue // an answer to one of the tool's questions
			}
			fs = append(fs, InputFinding{Kind: InputForbidden, Field: join(path, name)})
		}
	case *errkind.Type:
		got := k.Got
		if n, ok := at.(json.Number); ok && !strings.ContainsAny(string(n), ".eE") {
			got = "integer"
		}
		fs = append(fs, InputFinding{Kind: InputType, Field: path, Want: strings.Join(k.Want, " or "), Got: []string{got}})
	default:
		rule := t.inputSchema.explain(ve, v, "", "field").Msg
		if path != "" {
			rule = strings.TrimPrefix(rule, fmt.Sprintf("field %q: ", path))
		}
		fs = append(fs, InputFinding{Kind: InputInvalid, Field: path, Rule: rule})
	}
	return fs
}

// leaves are the keywords that failed under ve: every one of a group, through references and
// allOf, but not into the alternatives of anyOf or oneOf, which fail as a whole (as cause does).
func leaves(ve *jsonschema.ValidationError, out []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	switch ve.ErrorKind.(type) {
	case *errkind.Schema, *errkind.Group, *errkind.Reference, *errkind.AllOf:
		if len(ve.Causes) > 0 {
			for _, c := range ve.Causes {
				out = leaves(c, out)
			}
			return out
		}
	}
	return append(out, ve)
}
