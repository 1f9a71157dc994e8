// Package schemainfer infers a JSON Schema from sample JSON values, the inputs a workflow really
// ran with, for `taskgate discover --infer`. The schema accepts every sample and says what they
// share:
//
//   - the type of each value; where samples differ, the list of their types ("null" among them).
//     A number written without a fraction or an exponent is an "integer"; a value that is an
//     integer in some samples and not in others is a "number".
//   - for objects, the schema of each property, and as "required" the properties that every
//     object at that place has. Other properties stay allowed: a sample is not the whole world.
//   - for arrays, the schema of their items, merged over every item of every sample.
//   - for strings, with Options.Enums only, an "enum" of their values when the samples show a small
//     closed set: only where every value at that place is a string, at least MinEnumSamples
//     strings were seen there, they hold at most MaxEnumValues distinct values, and each value was
//     seen at least twice. Fewer samples, or a value seen once, say nothing about a set being
//     closed.
//
// An enum is the one place where a sampled value goes into the schema (there is no "default",
// "examples" or "const"), and a value there is shown to every caller and required of them. So
// where the samples show a closed set and no enum is drafted, Infer says why (Open): enums are
// off, a name on the path reads as a secret's (SecretName), or a value could be a secret: longer
// than MaxEnumLength characters, or random-looking (see MaxEnumLength). Property names are sampled
// too: a name that could be a secret is left out of "properties" and "required" (the object still
// allows it).
//
// The samples are only read: nothing here logs or keeps them, and an error names a sample by its
// position, never by its content.
package schemainfer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The rule for an enum of strings (see the package comment).
const (
	MinEnumSamples = 10
	MaxEnumValues  = 5
	MinEnumRepeats = 2
)

// Options is what Infer may draw from the samples beyond their shape.
type Options struct {
	// Enums lets Infer list a closed set of strings as an enum; without it, it lists none.
	Enums bool
}

// Reason is why Infer left a place of the schema more open than its samples show.
type Reason int

const (
	// EnumsOff: the samples show a closed set of strings, and Options.Enums is off.
	EnumsOff Reason = iota + 1
	// SecretName: the samples show a closed set of strings, and a name on the path to it reads as
	// a secret's.
	SecretName
	// LongValue: the samples show a closed set of strings, and one is longer than MaxEnumLength
	// characters.
	LongValue
	// RandomValue: the samples show a closed set of strings, and one looks like a random token.
	RandomValue
	// SecretKeys: some property names of the objects there could be secrets, and are left out.
	SecretKeys
)

// Open is a place that Infer left more open than its samples show, and why.
type Open struct {
	// Path is the place in jq's words, less the "." that stands for the top: "" for the top,
	// ".region", ".tags[]", `["db password"]`. A name that is not an identifier is quoted, so
	// that a path is one line.
	Path   string
	Reason Reason
}

// Infer returns the JSON Schema (compact, keys sorted) that describes samples, each one JSON
// value, and the places it left open, sorted by path. It fails when there is no sample or a sample
// is not JSON.
func Infer(samples []json.RawMessage, o Options) (json.RawMessage, []Open, error) {
	if len(samples) == 0 {
		return nil, nil, errors.New("no sample to infer a schema from")
	}
	root := &node{}
	for i, s := range samples {
		d := json.NewDecoder(bytes.NewReader(s))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("sample %d of %d is not JSON", i+1, len(samples))
		}
		if _, err := d.Token(); err != io.EOF {
			return nil, nil, fmt.Errorf("sample %d of %d is not one JSON value: something follows it", i+1, len(samples))
		}
		root.add(v)
	}
	w := &writer{Options: o}
	schema, err := json.Marshal(w.schema(root, place{}))
	slices.SortFunc(w.open, func(a, b Open) int { return strings.Compare(a.Path, b.Path) })
	return schema, w.open, err
}

// node is what the samples show at one place (the top, a property, the items of an array).
type node struct {
	types map[string]bool
	// objects is how many objects were seen here, and props what they hold; a property's own
	// count of values says how many of those objects had it.
	objects int
	props   map[string]*node
	values  int
	items   *node
	// strings counts each string value while there are at most MaxEnumValues of them; manyStrings
	// is set once there are more.
	strings     map[string]int
	stringCount int
	manyStrings bool
}

func (n *node) add(v any) {
	n.values++
	if n.types == nil {
		n.types = map[string]bool{}
	}
	switch v := v.(type) {
	case nil:
		n.types["null"] = true
	case bool:
		n.types["boolean"] = true
	case json.Number:
		if strings.ContainsAny(string(v), ".eE") {
			n.types["number"] = true
		} else {
			n.types["integer"] = true
		}
	case string:
		n.types["string"] = true
		n.addString(v)
	case []any:
		n.types["array"] = true
		if n.items == nil {
			n.items = &node{}
		}
		for _, item := range v {
			n.items.add(item)
		}
	case map[string]any:
		n.types["object"] = true
		n.objects++
		if n.props == nil {
			n.props = map[string]*node{}
		}
		for k, pv := range v {
			p := n.props[k]
			if p == nil {
				p = &node{}
				n.props[k] = p
			}
			p.add(pv)
		}
	}
}

func (n *node) addString(s string) {
	n.stringCount++
	if n.manyStrings {
		return
	}
	if n.strings == nil {
		n.strings = map[string]int{}
	}
	n.strings[s]++
	if len(n.strings) > MaxEnumValues {
		n.manyStrings, n.strings = true, nil
	}
}

// identifier is a name that jq writes after a dot.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// place is where a node sits: its path, and whether a name on the path reads as a secret's.
type place struct {
	path   string
	secret bool
}

func (p place) property(name string) place {
	step := "." + name
	if !identifier.MatchString(name) {
		step = "[" + strconv.Quote(name) + "]"
	}
	return place{path: p.path + step, secret: p.secret || secretName(name)}
}

func (p place) items() place { return place{path: p.path + "[]", secret: p.secret} }

// writer writes the schema of the nodes and notes the places it leaves open.
type writer struct {
	Options
	open []Open
}

func (w *writer) leaveOpen(at place, why Reason) { w.open = append(w.open, Open{at.path, why}) }

func (w *writer) schema(n *node, at place) map[string]any {
	s := map[string]any{}
	if t := n.typeNames(); len(t) == 1 {
		s["type"] = t[0]
	} else if len(t) > 1 {
		s["type"] = t
	}
	if n.types["object"] {
		w.properties(s, n, at)
	}
	if n.items != nil && n.items.values > 0 {
		s["items"] = w.schema(n.items, at.items())
	}
	if e := w.enum(n, at); e != nil {
		s["enum"] = e
	}
	return s
}

// properties writes the "properties" and "required" of an object's schema s, without the names
// that could be secrets.
func (w *writer) properties(s map[string]any, n *node, at place) {
	props := map[string]any{}
	var required []string
	for k, p := range n.props {
		if secretValue(k) != 0 {
			continue
		}
		props[k] = w.schema(p, at.property(k))
		if p.values == n.objects {
			required = append(required, k)
		}
	}
	if len(props) < len(n.props) {
		w.leaveOpen(at, SecretKeys)
	}
	if len(props) > 0 {
		s["properties"] = props
	}
	if len(required) > 0 {
		slices.Sort(required)
		s["required"] = required
	}
}

// typeNames lists the types seen here, sorted; "integer" only when no other number was seen.
func (n *node) typeNames() []string {
	t := maps.Clone(n.types)
	if t["number"] {
		delete(t, "integer")
	}
	return slices.Sorted(maps.Keys(t))
}

// enum is the closed set of strings seen at a place, sorted, when the samples show one and
// nothing keeps it open (whyOpen); else nil.
func (w *writer) enum(n *node, at place) []string {
	if !n.closedSet() {
		return nil
	}
	values := slices.Sorted(maps.Keys(n.strings))
	if why := w.whyOpen(at, values); why != 0 {
		w.leaveOpen(at, why)
		return nil
	}
	return values
}

// whyOpen is why a closed set of values at a place is no enum, 0 when it may be one.
func (w *writer) whyOpen(at place, values []string) Reason {
	if at.secret {
		return SecretName
	}
	for _, v := range values {
		if why := secretValue(v); why != 0 {
			return why
		}
	}
	if !w.Enums {
		return EnumsOff
	}
	return 0
}

// closedSet reports whether the strings seen here are a closed set, by the rule of the package
// comment.
func (n *node) closedSet() bool {
	if len(n.types) != 1 || !n.types["string"] || n.manyStrings || n.stringCount < MinEnumSamples {
		return false
	}
	for _, seen := range n.strings {
		if seen < MinEnumRepeats {
			return false
		}
	}
	return true
}
