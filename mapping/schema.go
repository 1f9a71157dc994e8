package mapping

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// keywordKind is what a JSON Schema keyword holds.
type keywordKind int

const (
	kwAny          keywordKind = iota
	kwSchema                   // a schema
	kwSchemaMap                // names to schemas
	kwRegexMap                 // regular expressions to schemas
	kwSchemaList               // a list of schemas
	kwItems                    // a schema, or (draft-07) a list of schemas
	kwDependencies             // (draft-07) names to schemas or lists of names
	kwType                     // a JSON type or a list of them
	kwString
	kwRegex // a regular expression
	kwNumber
	kwCount // a non-negative integer
	kwBool
	kwArray      // a list of any values
	kwStrings    // a list of strings
	kwStringsMap // names to lists of strings
	kwBoolMap    // names to booleans
)

// keywords are the JSON Schema keywords of drafts 2020-12 and draft-07. Any other key in a schema is reported: it would be silently ignored.
var keywords = map[string]keywordKind{
	"$id": kwString, "$schema": kwString, "$ref": kwString, "$comment": kwString,
	"$anchor": kwString, "$dynamicAnchor": kwString, "$dynamicRef": kwString,
	"$defs": kwSchemaMap, "definitions": kwSchemaMap, "$vocabulary": kwBoolMap,
	"title": kwString, "description": kwString, "default": kwAny, "deprecated": kwBool,
	"readOnly": kwBool, "writeOnly": kwBool, "examples": kwArray,
	"type": kwType, "enum": kwArray, "const": kwAny,
	"multipleOf": kwNumber, "minimum": kwNumber, "maximum": kwNumber,
	"exclusiveMinimum": kwNumber, "exclusiveMaximum": kwNumber,
	"minLength": kwCount, "maxLength": kwCount, "pattern": kwRegex, "format": kwString,
	"prefixItems": kwSchemaList, "items": kwItems, "additionalItems": kwSchema,
	"minItems": kwCount, "maxItems": kwCount, "uniqueItems": kwBool, "contains": kwSchema,
	"minContains": kwCount, "maxContains": kwCount, "unevaluatedItems": kwSchema,
	"minProperties": kwCount, "maxProperties": kwCount, "required": kwStrings,
	"dependentRequired": kwStringsMap, "properties": kwSchemaMap, "patternProperties": kwRegexMap,
	"additionalProperties": kwSchema, "propertyNames": kwSchema, "unevaluatedProperties": kwSchema,
	"dependencies": kwDependencies, "dependentSchemas": kwSchemaMap,
	"allOf": kwSchemaList, "anyOf": kwSchemaList, "oneOf": kwSchemaList, "not": kwSchema,
	"if": kwSchema, "then": kwSchema, "else": kwSchema,
	"contentEncoding": kwString, "contentMediaType": kwString, "contentSchema": kwSchema,
}

var jsonTypes = []string{"string", "number", "integer", "boolean", "object", "array", "null"}

// schemaVersions are the values of $schema that taskgate accepts: the drafts MCP clients use.
var schemaVersions = []string{
	"https://json-schema.org/draft/2020-12/schema",
	"http://json-schema.org/draft-07/schema#",
	"https://json-schema.org/draft-07/schema#",
}

const schemaHint = "see https://json-schema.org/understanding-json-schema"

// schema reads an inputSchema or outputSchema: a JSON Schema of an object, compiled. It
// returns nils when there is a problem (reported).
func (d *doc) schema(e entry) (json.RawMessage, *compiled) {
	if _, ok := e.value.(*ast.MappingNode); !ok {
		d.errorf(e.value, "write a JSON Schema like {type: object, properties: {...}}", "%s: must be a mapping, not %s", e.path, kind(e.value))
		return nil, nil
	}
	before := len(d.l.errs)
	root := d.checkSchema(e.value, e.path)
	i := slices.IndexFunc(root, func(e entry) bool { return e.key == "type" })
	if i < 0 {
		d.errorf(e.keyAt, "tool arguments and structured results are JSON objects", "%s: needs type: object", e.path)
	} else if s, ok := root[i].value.(*ast.StringNode); !ok || s.Value != "object" {
		d.errorf(root[i].value, "tool arguments and structured results are JSON objects", "%s: must be object", root[i].path)
	}
	if i := slices.IndexFunc(root, func(e entry) bool { return e.key == "$schema" }); i >= 0 {
		if s, ok := root[i].value.(*ast.StringNode); ok && !slices.Contains(schemaVersions, s.Value) {
			d.errorf(s, "use "+schemaVersions[0]+", or leave $schema out", "%s: taskgate validates draft 2020-12 and draft-07 schemas, not %q", root[i].path, s.Value)
		}
	}
	var buf bytes.Buffer
	if !d.jsonValue(e.value, e.path, &buf) || len(d.l.errs) > before {
		return nil, nil
	}
	c, err := compile(buf.Bytes(), besideMapping{dir: filepath.Dir(d.file)})
	if err != nil {
		// The compiler names schemas by the URLs it was given, which mean nothing to a reader.
		msg := strings.ReplaceAll(strings.ReplaceAll(err.Error(), schemaURL, ""), schemaBase, "")
		d.errorf(e.keyAt, schemaHint, "%s: invalid JSON Schema: %s", e.path, msg)
		return nil, nil
	}
	for _, loc := range slices.Sorted(maps.Keys(c.at)) {
		s := c.at[loc]
		if s.Default == nil {
			continue
		}
		if err := s.Validate(*s.Default); err != nil {
			why := c.explain(err, *s.Default, "", "key").Msg
			if at, path, ok := d.nodeAt(e, loc, "default"); ok {
				d.errorf(at, "a default must fit the schema it is the default of", "%s: does not fit its schema: %s", path, why)
			} else {
				d.errorf(e.keyAt, "a default must fit the schema it is the default of", "%s: the default of %s does not fit its schema: %s", e.path, loc, why)
			}
		}
	}
	return json.RawMessage(buf.Bytes()), c
}

// schemaURL is where a compiled schema lives, only for the compiler: a $ref relative to it
// resolves under schemaBase, which stands for the folder of the mapping file.
const (
	schemaBase = "mem:///"
	schemaURL  = schemaBase + "schema.json"
)

// compile compiles a JSON Schema (draft 2020-12 unless its $schema says otherwise). The schemas it
// refers to are loaded by load alone: nil loads none (jsonschema's own loader would read any
// file:// URL).
func compile(schema []byte, load jsonschema.URLLoader) (*compiled, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	if load == nil {
		load = loadsNothing{}
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(load)
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	root, err := c.Compile(schemaURL)
	if err != nil {
		return nil, err
	}
	at := map[string]*jsonschema.Schema{}
	collect(root, at)
	return &compiled{root: root, at: at}, nil
}

// loadsNothing is the loader of a schema that must be whole in itself.
type loadsNothing struct{}

func (loadsNothing) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is not in the schema: taskgate loads no other schema for it", url)
}

// besideMapping loads the schemas a mapping's schema refers to by a path relative to the mapping
// file: JSON files in its folder or below, and nothing from anywhere else.
type besideMapping struct{ dir string }

func (b besideMapping) Load(url string) (any, error) {
	rel, ok := strings.CutPrefix(url, schemaBase)
	if ok {
		rel, ok = unescapedLocal(rel)
	}
	if !ok {
		return nil, fmt.Errorf("%s is not beside the mapping file: taskgate loads schemas only by a path relative to it", url)
	}
	f, err := os.Open(filepath.Join(b.dir, rel))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return jsonschema.UnmarshalJSON(f)
}

// unescapedLocal is a URL path, unescaped, when it names a file in the folder it is relative to
// or below (filepath.IsLocal).
func unescapedLocal(p string) (string, bool) {
	p, err := url.PathUnescape(p)
	return p, err == nil && p != "" && filepath.IsLocal(filepath.FromSlash(p))
}

// collect records s and every subschema it reaches by location.
func collect(s *jsonschema.Schema, at map[string]*jsonschema.Schema) {
	if s == nil || at[s.Location] != nil {
		return
	}
	at[s.Location] = s
	var subs []*jsonschema.Schema
	subs = append(subs, s.Ref, s.RecursiveRef, s.Not, s.If, s.Then, s.Else, s.PropertyNames, s.UnevaluatedProperties,
		s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema)
	subs = append(subs, s.AllOf...)
	subs = append(subs, s.AnyOf...)
	subs = append(subs, s.OneOf...)
	subs = append(subs, s.PrefixItems...)
	subs = append(subs, slices.Collect(maps.Values(s.Properties))...)
	subs = append(subs, slices.Collect(maps.Values(s.PatternProperties))...)
	subs = append(subs, slices.Collect(maps.Values(s.DependentSchemas))...)
	if s.DynamicRef != nil {
		subs = append(subs, s.DynamicRef.Ref)
	}
	for _, v := range append([]any{s.AdditionalProperties, s.Items, s.AdditionalItems}, slices.Collect(maps.Values(s.Dependencies))...) {
		switch v := v.(type) {
		case *jsonschema.Schema:
			subs = append(subs, v)
		case []*jsonschema.Schema:
			subs = append(subs, v...)
		}
	}
	for _, sub := range subs {
		collect(sub, at)
	}
}

// nodeAt finds the value of key in the subschema at location, within the schema of e: its node
// and its path for messages. ok is false when the location is not a JSON Pointer into e's schema
// (a schema with an $id of its own).
func (d *doc) nodeAt(e entry, location, key string) (n ast.Node, path string, ok bool) {
	ptr, ok := strings.CutPrefix(location, schemaURL+"#")
	if !ok {
		return nil, "", false
	}
	n, path = e.value, e.path
	var tokens []string
	if ptr != "" {
		tokens = strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	}
	for _, tok := range append(tokens, key) {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := d.resolve(n).(type) {
		case *ast.MappingNode:
			es, _ := d.entries(v, path)
			i := slices.IndexFunc(es, func(e entry) bool { return e.key == tok })
			if i < 0 {
				return nil, "", false
			}
			n, path = es[i].value, es[i].path
		case *ast.SequenceNode:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v.Values) {
				return nil, "", false
			}
			n, path = v.Values[i], fmt.Sprintf("%s[%d]", path, i)
		default:
			return nil, "", false
		}
	}
	return n, path, true
}

// checkSchema reports unknown keywords and keyword values of the wrong kind, with their
// positions, and returns the schema's keys (none for a true or false schema).
func (d *doc) checkSchema(n ast.Node, path string) []entry {
	n = d.resolve(n)
	switch n.(type) {
	case *ast.BoolNode:
		return nil
	case *ast.MappingNode:
	default:
		d.errorf(n, "a schema is a mapping, or true or false", "%s: must be a JSON Schema, not %s", path, kind(n))
		return nil
	}
	es, _ := d.entries(n, path)
	for _, e := range es {
		kw, known := keywords[e.key]
		if !known {
			d.errorf(e.keyAt, suggest(e.key, keywordNames(), schemaHint), "%s: unknown JSON Schema keyword %q", path, e.key)
			continue
		}
		d.checkKeyword(kw, e)
	}
	return es
}

func keywordNames() []string {
	names := make([]string, 0, len(keywords))
	for k := range keywords {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

func (d *doc) checkKeyword(kw keywordKind, e entry) {
	switch kw {
	case kwSchema:
		d.checkSchema(e.value, e.path)
	case kwSchemaMap, kwRegexMap, kwDependencies, kwStringsMap, kwBoolMap:
		es, _ := d.entries(e.value, e.path)
		for _, m := range es {
			switch kw {
			case kwSchemaMap:
				d.checkSchema(m.value, m.path)
			case kwRegexMap:
				d.checkRegex(m.key, m.keyAt, e.path)
				d.checkSchema(m.value, m.path)
			case kwDependencies:
				if _, list := m.value.(*ast.SequenceNode); list {
					d.checkList(m, kwString)
				} else {
					d.checkSchema(m.value, m.path)
				}
			case kwStringsMap:
				d.checkList(m, kwString)
			case kwBoolMap:
				d.checkKeyword(kwBool, m)
			}
		}
	case kwSchemaList:
		d.checkList(e, kwSchema)
	case kwItems:
		if _, list := e.value.(*ast.SequenceNode); list {
			d.checkList(e, kwSchema)
		} else {
			d.checkSchema(e.value, e.path)
		}
	case kwType:
		if _, list := e.value.(*ast.SequenceNode); list {
			d.checkList(e, kwType)
			return
		}
		if s, ok := d.str(e.value, e.path); ok && !slices.Contains(jsonTypes, s) {
			d.errorf(e.value, suggest(s, jsonTypes, "one of string, number, integer, boolean, object, array, null"), "%s: %q is not a JSON type", e.path, s)
		}
	case kwString:
		if s, ok := d.str(e.value, e.path); ok && (e.key == "$ref" || e.key == "$dynamicRef") {
			d.checkRef(e, s)
		}
	case kwRegex:
		if s, ok := d.str(e.value, e.path); ok {
			d.checkRegex(s, e.value, e.path)
		}
	case kwNumber:
		switch e.value.(type) {
		case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode: // jsonValue rejects the last two
		default:
			d.errorf(e.value, "", "%s: must be a number, not %s", e.path, kind(e.value))
		}
	case kwCount:
		v, ok := e.value.(*ast.IntegerNode)
		if !ok {
			d.errorf(e.value, "", "%s: must be a non-negative integer, not %s", e.path, kind(e.value))
		} else if n, signed := v.Value.(int64); signed && n < 0 {
			d.errorf(e.value, "", "%s: must be a non-negative integer, not %d", e.path, n)
		}
	case kwBool:
		if _, ok := e.value.(*ast.BoolNode); !ok {
			d.errorf(e.value, "", "%s: must be true or false, not %s", e.path, kind(e.value))
		}
	case kwArray:
		d.checkList(e, kwAny)
	case kwStrings:
		d.checkList(e, kwString)
	}
}

// checkRef refuses a reference that would load a schema from anywhere but beside the mapping
// file: a URL (file://, http(s)://, ...), an absolute path, or a path out of the mapping's folder.
func (d *doc) checkRef(e entry, ref string) {
	const hint = `refer within the schema ("#/$defs/name") or to a JSON file beside the mapping ("common.json#/$defs/name"); taskgate fetches nothing`
	u, err := url.Parse(ref)
	switch {
	case err != nil:
		d.errorf(e.value, hint, "%s: %q is not a URI reference", e.path, ref)
	case u.Scheme != "" || u.Host != "" || strings.HasPrefix(u.Path, "/"):
		d.errorf(e.value, hint, "%s: %q is outside the mapping", e.path, ref)
	case u.Path != "":
		if _, local := unescapedLocal(u.Path); !local {
			d.errorf(e.value, hint, "%s: %q leaves the mapping's folder", e.path, ref)
		}
	}
}

// checkList checks that e holds a sequence whose items are all of kind item.
func (d *doc) checkList(e entry, item keywordKind) {
	seq, ok := e.value.(*ast.SequenceNode)
	if !ok {
		d.errorf(e.value, "", "%s: must be a list, not %s", e.path, kind(e.value))
		return
	}
	for i, v := range seq.Values {
		d.checkKeyword(item, entry{key: e.key, keyAt: e.keyAt, value: d.resolve(v), path: fmt.Sprintf("%s[%d]", e.path, i)})
	}
}

func (d *doc) checkRegex(re string, at ast.Node, path string) {
	if _, err := regexp.Compile(re); err != nil {
		d.errorf(at, "taskgate uses Go's RE2 syntax: no lookaround or backreferences", "%s: %q is not a regular expression taskgate can run: %v", path, re, err)
	}
}
