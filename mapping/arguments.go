package mapping

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	errkind "github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// ArgumentError says how tool arguments break the tool's inputSchema, in words meant for the
// caller (often a model) to correct them.
type ArgumentError struct {
	// Argument is the path of the offending argument, like "seconds", "options.mode" or "tags[2]".
	// When several arguments are missing or not allowed, it is the object that holds them; empty
	// for the arguments as a whole.
	Argument string
	Msg      string
}

func (e *ArgumentError) Error() string { return e.Msg }

// ValidateArguments checks tool arguments, a JSON object, against the tool's inputSchema.
// Absent or null arguments are {}. The error is an *ArgumentError.
func (t *Tool) ValidateArguments(args json.RawMessage) error {
	args = orEmptyObject(args)
	// Numbers stay json.Number, so that limits compare exactly.
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		if jsonErr := json.Unmarshal(args, new(any)); jsonErr != nil {
			err = jsonErr // encoding/json's words, which name the offset
		}
		return &ArgumentError{Msg: "arguments are not valid JSON: " + err.Error()}
	}
	if _, ok := v.(map[string]any); !ok {
		return &ArgumentError{Msg: "arguments must be a JSON object, not " + jsonTypeOf(v)}
	}
	if t.inputSchema == nil { // a Tool not made by Load or Parse
		return nil
	}
	if err := t.inputSchema.Validate(v); err != nil {
		return t.inputSchema.explain(err, v, "arguments", "argument")
	}
	return nil
}

func jsonTypeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}

// compiled is an input schema ready to validate, with its subschemas by location.
type compiled struct {
	root *jsonschema.Schema
	at   map[string]*jsonschema.Schema
}

// Validate checks v, a value from jsonschema.UnmarshalJSON.
func (c *compiled) Validate(v any) error { return c.root.Validate(v) }

// explain turns a validation error of v into plain words about the part at fault, named by
// part ("argument") and, when it is v as a whole, whole ("arguments"; "" leaves it unnamed).
func (c *compiled) explain(err error, v any, whole, part string) *ArgumentError {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return &ArgumentError{Msg: err.Error()}
	}
	ve = cause(ve)
	path, at := argumentPath(v, ve.InstanceLocation)
	e := &ArgumentError{Argument: path}
	subject := whole
	if path != "" {
		subject = fmt.Sprintf("%s %q", part, path)
	}
	// about says something of the subject.
	about := func(format string, args ...any) string {
		if subject == "" {
			return fmt.Sprintf(format, args...)
		}
		return subject + ": " + fmt.Sprintf(format, args...)
	}
	// names words several arguments, noting the one at fault when there is one.
	names := func(keys []string, one, many string) string {
		paths := make([]string, len(keys))
		for i, k := range keys {
			paths[i] = join(path, k)
		}
		slices.Sort(paths)
		if len(paths) == 1 {
			e.Argument = paths[0]
		}
		return quoteList(part, paths, one, many)
	}
	switch k := ve.ErrorKind.(type) {
	case *errkind.Required:
		e.Msg = names(k.Missing, "is", "are") + " required"
	case *errkind.DependentRequired:
		e.Msg = fmt.Sprintf("%s required when %q is given", names(k.Missing, "is", "are"), join(path, k.Prop))
	case *errkind.Dependency:
		e.Msg = fmt.Sprintf("%s required when %q is given", names(k.Missing, "is", "are"), join(path, k.Prop))
	case *errkind.AdditionalProperties:
		e.Msg = names(k.Properties, "is", "are") + " not allowed"
		if s := c.at[ve.SchemaURL]; s != nil && len(s.Properties) > 0 {
			e.Msg += " (known: " + strings.Join(slices.Sorted(maps.Keys(s.Properties)), ", ") + ")"
		}
	case *errkind.FalseSchema:
		e.Msg = strings.TrimPrefix(subject+" is not allowed", " ")
	case *errkind.Type:
		want := strings.Join(k.Want, ", ")
		if len(k.Want) > 1 {
			want = "one of " + want
		}
		got := k.Got
		if n, ok := at.(json.Number); ok && !strings.ContainsAny(string(n), ".eE") {
			got = "integer"
		}
		e.Msg = about("has type %s, want %s", got, want)
	case *errkind.Enum:
		quoted := make([]string, len(k.Want))
		for i, v := range k.Want {
			quoted[i] = jsonText(v)
		}
		e.Msg = about("must be one of %s", strings.Join(quoted, ", "))
	case *errkind.Const:
		e.Msg = about("must be %s", jsonText(k.Want))
	case *errkind.Minimum:
		e.Msg = about("must be at least %s", number(k.Want))
	case *errkind.Maximum:
		e.Msg = about("must be at most %s", number(k.Want))
	case *errkind.ExclusiveMinimum:
		e.Msg = about("must be greater than %s", number(k.Want))
	case *errkind.ExclusiveMaximum:
		e.Msg = about("must be less than %s", number(k.Want))
	case *errkind.MultipleOf:
		e.Msg = about("must be a multiple of %s", number(k.Want))
	case *errkind.MinLength:
		e.Msg = about("must be at least %s long", count(k.Want, "character"))
	case *errkind.MaxLength:
		e.Msg = about("must be at most %s long", count(k.Want, "character"))
	case *errkind.Pattern:
		e.Msg = about("must match the pattern %s", k.Want)
	case *errkind.MinItems:
		e.Msg = about("must have at least %s", count(k.Want, "item"))
	case *errkind.MaxItems:
		e.Msg = about("must have at most %s", count(k.Want, "item"))
	case *errkind.AdditionalItems:
		e.Msg = about("has %s more than allowed", count(k.Count, "item"))
	case *errkind.MinProperties:
		e.Msg = about("must have at least %s", count(k.Want, "property"))
	case *errkind.MaxProperties:
		e.Msg = about("must have at most %s", count(k.Want, "property"))
	case *errkind.UniqueItems:
		e.Msg = about("must not repeat items (items %d and %d are the same)", k.Duplicates[0], k.Duplicates[1])
	case *errkind.Contains:
		e.Msg = about("has no item of the required form")
	case *errkind.MinContains:
		e.Msg = about("must have at least %s of the required form, not %d", count(k.Want, "item"), len(k.Got))
	case *errkind.MaxContains:
		e.Msg = about("must have at most %s of the required form, not %d", count(k.Want, "item"), len(k.Got))
	case *errkind.PropertyNames:
		if path == "" {
			e.Argument = propertyNamesPath(ve.SchemaURL)
			if e.Argument != "" {
				subject = fmt.Sprintf("%s %q", part, e.Argument)
			}
		}
		e.Msg = about("the name %q is not allowed", k.Property)
	case *errkind.AnyOf:
		e.Msg = about("matches none of the allowed forms")
	case *errkind.OneOf:
		e.Msg = about("matches none of the allowed forms")
		if len(k.Subschemas) > 0 {
			e.Msg = about("matches more than one of the allowed forms, want exactly one")
		}
	case *errkind.Not:
		e.Msg = about("matches a form that is not allowed")
	default: // content and format assertions, which taskgate does not turn on
		e.Msg = about("%s", k.LocalizedString(message.NewPrinter(language.English)))
	}
	return e
}

// cause follows an error to the one keyword that failed: the first (by argument) of a group,
// through references and allOf, but not into the alternatives of anyOf or oneOf, which are
// explained as a whole.
func cause(ve *jsonschema.ValidationError) *jsonschema.ValidationError {
	for len(ve.Causes) > 0 {
		switch ve.ErrorKind.(type) {
		case *errkind.Schema, *errkind.Group, *errkind.Reference, *errkind.AllOf:
		default:
			return ve
		}
		ve = slices.MinFunc(ve.Causes, func(a, b *jsonschema.ValidationError) int {
			return slices.Compare(a.InstanceLocation, b.InstanceLocation)
		})
	}
	return ve
}

// argumentPath writes an instance location as an argument path, like "tags[2]" or "opts.p.x"
// (the arguments tell array indexes from keys), and returns the value there.
func argumentPath(args any, loc []string) (path string, at any) {
	v := args
	for _, tok := range loc {
		switch c := v.(type) {
		case []any:
			i, _ := strconv.Atoi(tok) // a location the validator made points at an item
			path += "[" + tok + "]"
			v = c[i]
		case map[string]any:
			path = join(path, tok)
			v = c[tok]
		}
	}
	return path, v
}

// propertyNamesPath is the argument a propertyNames schema applies to, when properties alone
// lead to it: the validator gives its errors no instance location.
func propertyNamesPath(location string) string {
	_, ptr, _ := strings.Cut(location, "#")
	ptr, ok := strings.CutSuffix(ptr, "/propertyNames")
	tokens := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	if !ok || ptr == "" || len(tokens)%2 != 0 {
		return ""
	}
	var path string
	for i := 0; i < len(tokens); i += 2 {
		if tokens[i] != "properties" {
			return ""
		}
		path = join(path, strings.ReplaceAll(strings.ReplaceAll(tokens[i+1], "~1", "/"), "~0", "~"))
	}
	return path
}

func jsonText(v any) string {
	b, _ := json.Marshal(v) // decoded from JSON, so it encodes again
	return string(b)
}

// number writes a limit as a decimal number.
func number(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// count is "1 item" or "3 items".
func count(n int, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case strings.HasSuffix(noun, "y"):
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// quoteList is `argument "a" is` or `arguments "a", "b" are`.
func quoteList(noun string, items []string, one, many string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = strconv.Quote(s)
	}
	if len(items) == 1 {
		return fmt.Sprintf("%s %s %s", noun, quoted[0], one)
	}
	return fmt.Sprintf("%ss %s %s", noun, strings.Join(quoted, ", "), many)
}
