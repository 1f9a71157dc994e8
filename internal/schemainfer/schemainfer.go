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
//   - for strings, an "enum" of their values when the samples show a small closed set: only where
//     every value at that place is a string, at least MinEnumSamples strings were seen there, they
//     hold at most MaxEnumValues distinct values, and each value was seen at least twice. Fewer
//     samples, or a value seen once, say nothing about a set being closed.
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
	"slices"
	"strings"
)

// The rule for an enum of strings (see the package comment).
const (
	MinEnumSamples = 10
	MaxEnumValues  = 5
	MinEnumRepeats = 2
)

// Infer returns the JSON Schema (compact, keys sorted) that describes samples, each one JSON
// value. It fails when there is no sample or a sample is not JSON.
func Infer(samples []json.RawMessage) (json.RawMessage, error) {
	if len(samples) == 0 {
		return nil, errors.New("no sample to infer a schema from")
	}
	root := &node{}
	for i, s := range samples {
		d := json.NewDecoder(bytes.NewReader(s))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("sample %d of %d is not JSON", i+1, len(samples))
		}
		if _, err := d.Token(); err != io.EOF {
			return nil, fmt.Errorf("sample %d of %d is not one JSON value: something follows it", i+1, len(samples))
		}
		root.add(v)
	}
	return json.Marshal(root.schema())
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

func (n *node) schema() map[string]any {
	s := map[string]any{}
	if t := n.typeNames(); len(t) == 1 {
		s["type"] = t[0]
	} else if len(t) > 1 {
		s["type"] = t
	}
	if n.types["object"] {
		props := map[string]any{}
		var required []string
		for k, p := range n.props {
			props[k] = p.schema()
			if p.values == n.objects {
				required = append(required, k)
			}
		}
		if len(props) > 0 {
			s["properties"] = props
		}
		if len(required) > 0 {
			slices.Sort(required)
			s["required"] = required
		}
	}
	if n.items != nil && n.items.values > 0 {
		s["items"] = n.items.schema()
	}
	if e := n.enum(); e != nil {
		s["enum"] = e
	}
	return s
}

// typeNames lists the types seen here, sorted; "integer" only when no other number was seen.
func (n *node) typeNames() []string {
	t := maps.Clone(n.types)
	if t["number"] {
		delete(t, "integer")
	}
	return slices.Sorted(maps.Keys(t))
}

// enum is the closed set of strings seen here, sorted, when the rule of the package comment
// allows one; else nil.
func (n *node) enum() []string {
	if len(n.types) != 1 || !n.types["string"] || n.manyStrings || n.stringCount < MinEnumSamples {
		return nil
	}
	for _, seen := range n.strings {
		if seen < MinEnumRepeats {
			return nil
		}
	}
	return slices.Sorted(maps.Keys(n.strings))
}
