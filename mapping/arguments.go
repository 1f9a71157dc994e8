package mapping

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ArgumentError says how tool arguments break the tool's inputSchema, in words meant for the
// caller (often a model) to correct them.
type ArgumentError struct {
	// Argument is the path of the offending argument, like "seconds", "options.mode" or "tags[]"
	// (some item of tags). When several arguments are missing or not allowed, it is the object
	// that holds them; empty for the arguments as a whole.
	Argument string
	Msg      string
}

func (e *ArgumentError) Error() string { return e.Msg }

// ValidateArguments checks tool arguments, a JSON object, against the tool's inputSchema.
// Absent or null arguments are {}. The error is an *ArgumentError.
func (t *Tool) ValidateArguments(args json.RawMessage) error {
	var v any
	if err := json.Unmarshal(orEmptyObject(args), &v); err != nil {
		return &ArgumentError{Msg: "arguments are not valid JSON: " + err.Error()}
	}
	if _, ok := v.(map[string]any); !ok {
		return &ArgumentError{Msg: "arguments must be a JSON object, not " + jsonTypeOf(v)}
	}
	if t.inputSchema == nil { // a Tool not made by Load or Parse
		return nil
	}
	if err := t.inputSchema.Validate(v); err != nil {
		return explain(err.Error(), t.InputSchema)
	}
	return nil
}

func jsonTypeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}

var (
	typeMsgRE   = regexp.MustCompile(`has type "(\w+)", want (one of )?"([^"]*)"$`)
	quotedRE    = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	dependentRE = regexp.MustCompile(`^dependentRequired\[("(?:[^"\\]|\\.)*")\]$`)
)

// explain turns a jsonschema-go validation error into plain words about the argument at
// fault. jsonschema-go reports "validating LOC: " for each schema it descends into (LOC is
// the schema's JSON Pointer, or "root"), then "KEYWORD: detail" from the schema that failed.
// The pointers give the argument path; the failing schema gives the limits to quote.
func explain(msg string, schema json.RawMessage) *ArgumentError {
	msg, _, _ = strings.Cut(msg, "\n") // anyOf and oneOf go on with each alternative's error
	var locs []string
	for strings.HasPrefix(msg, "validating ") {
		loc, rest, ok := strings.Cut(strings.TrimPrefix(msg, "validating "), ": ")
		if !ok {
			break
		}
		locs = append(locs, loc)
		msg = rest
	}
	path, ptr := argumentPath(locs)
	sub := schemaAt(schema, ptr)
	e := &ArgumentError{Argument: path}
	subject := "arguments"
	if path != "" {
		subject = fmt.Sprintf("argument %q", path)
	}
	jsonText := func(v any) string {
		b, _ := json.Marshal(v) // decoded from JSON, so it encodes again
		return string(b)
	}
	names := func(list string) []string {
		var out []string
		for _, q := range quotedRE.FindAllString(list, -1) {
			if s, err := strconv.Unquote(q); err == nil {
				out = append(out, join(path, s))
			}
		}
		slices.Sort(out)
		return out
	}
	// one notes the argument at fault when there is exactly one.
	one := func(names []string) []string {
		if len(names) == 1 {
			e.Argument = names[0]
		}
		return names
	}

	if list, ok := strings.CutPrefix(msg, "unexpected additional properties "); ok {
		bad := one(names(list))
		e.Msg = fmt.Sprintf("%s not allowed", quoteList("argument", bad, "is", "are"))
		if props, ok := sub["properties"].(map[string]any); ok && len(props) > 0 {
			known := make([]string, 0, len(props))
			for k := range props {
				known = append(known, k)
			}
			slices.Sort(known)
			e.Msg += " (known: " + strings.Join(known, ", ") + ")"
		}
		return e
	}
	keyword, detail, _ := strings.Cut(msg, ": ")
	has := func(key string) bool { _, ok := sub[key]; return ok }
	switch {
	case keyword == "type" && typeMsgRE.MatchString(detail):
		m := typeMsgRE.FindStringSubmatch(detail)
		want := m[3]
		if m[2] != "" {
			want = "one of " + want
		}
		e.Msg = fmt.Sprintf("%s: has type %s, want %s", subject, m[1], want)
	case keyword == "required":
		e.Msg = quoteList("argument", one(names(detail)), "is", "are") + " required"
	case dependentRE.MatchString(keyword):
		given, _ := strconv.Unquote(dependentRE.FindStringSubmatch(keyword)[1])
		e.Msg = fmt.Sprintf("%s required when %q is given", quoteList("argument", one(names(detail)), "is", "are"), join(path, given))
	case keyword == "enum" && has("enum"):
		vals, _ := sub["enum"].([]any)
		quoted := make([]string, len(vals))
		for i, v := range vals {
			quoted[i] = jsonText(v)
		}
		e.Msg = fmt.Sprintf("%s: must be one of %s", subject, strings.Join(quoted, ", "))
	case keyword == "const" && has("const"):
		e.Msg = fmt.Sprintf("%s: must be %s", subject, jsonText(sub["const"]))
	case has(keyword) && bounds[keyword] != "":
		limit := fmt.Sprint(sub[keyword]) // a json.Number or, for pattern, the expression
		words := fmt.Sprintf(bounds[keyword], limit)
		if limit == "1" {
			words = singular.Replace(words)
		}
		e.Msg = fmt.Sprintf("%s: %s", subject, words)
	case keyword == "uniqueItems":
		e.Msg = subject + ": must not repeat items"
	case keyword == "anyOf" || (keyword == "oneOf" && strings.HasPrefix(detail, "did not")):
		e.Msg = subject + ": matches none of the allowed forms"
	case keyword == "oneOf":
		e.Msg = subject + ": matches more than one of the allowed forms, want exactly one"
	case keyword == "contains":
		e.Msg = subject + ": has no item of the required form"
	case keyword == "not":
		e.Msg = subject + ": matches a form that is not allowed"
	default:
		e.Msg = fmt.Sprintf("%s: %s", subject, msg)
	}
	return e
}

// bounds words the keywords that set a limit; %s is the limit.
var bounds = map[string]string{
	"minimum":          "must be at least %s",
	"maximum":          "must be at most %s",
	"exclusiveMinimum": "must be greater than %s",
	"exclusiveMaximum": "must be less than %s",
	"multipleOf":       "must be a multiple of %s",
	"minLength":        "must be at least %s characters long",
	"maxLength":        "must be at most %s characters long",
	"pattern":          "must match the pattern %s",
	"minItems":         "must have at least %s items",
	"maxItems":         "must have at most %s items",
	"minProperties":    "must have at least %s properties",
	"maxProperties":    "must have at most %s properties",
}

var singular = strings.NewReplacer(" characters ", " character ", " items", " item", " properties", " property")

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

// argumentPath follows the schema locations of a validation error to the path of the
// argument they validated, and returns it with the JSON Pointer of the last schema.
func argumentPath(locs []string) (path, ptr string) {
	for _, loc := range locs {
		switch {
		case loc == "root":
			loc = ""
		case !strings.HasPrefix(loc, "/"): // a schema with an $id: no pointer to follow
			return path, "?"
		}
		// A location that does not extend the previous one is the target of a $ref: the same
		// argument, validated by another schema.
		if rel, ok := strings.CutPrefix(loc, ptr+"/"); ok && ptr != loc {
			path = extendPath(path, strings.Split(rel, "/"))
		}
		ptr = loc
	}
	return path, ptr
}

// extendPath adds the argument segments of a relative schema pointer to path.
func extendPath(path string, tokens []string) string {
	for i := 0; i < len(tokens); i++ {
		tok := unescapePointer(tokens[i])
		next := ""
		if i+1 < len(tokens) {
			next = unescapePointer(tokens[i+1])
		}
		switch tok {
		case "properties":
			path = join(path, next)
			i++
		case "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions",
			"allOf", "anyOf", "oneOf":
			i++ // followed by a name or index that is not part of the argument path
			if tok == "patternProperties" {
				path = join(path, "*")
			}
		case "additionalProperties", "unevaluatedProperties":
			path = join(path, "*")
		case "prefixItems":
			path += "[" + next + "]"
			i++
		case "items":
			if _, err := strconv.Atoi(next); err == nil { // draft-07 items array
				path += "[" + next + "]"
				i++
			} else {
				path += "[]"
			}
		case "additionalItems", "unevaluatedItems", "contains":
			path += "[]"
		}
	}
	return path
}

func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// schemaAt is the schema at a JSON Pointer in schema, or nil.
func schemaAt(schema json.RawMessage, ptr string) map[string]any {
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber() // limits are quoted as written
	var v any
	if dec.Decode(&v) != nil || ptr == "?" {
		return nil
	}
	if ptr != "" {
		for _, tok := range strings.Split(ptr[1:], "/") {
			tok = unescapePointer(tok)
			switch c := v.(type) {
			case map[string]any:
				v = c[tok]
			case []any:
				i, err := strconv.Atoi(tok)
				if err != nil || i < 0 || i >= len(c) {
					return nil
				}
				v = c[i]
			default:
				return nil
			}
		}
	}
	m, _ := v.(map[string]any)
	return m
}
