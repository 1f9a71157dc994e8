package mapping

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// doc is one parsed mapping file. Its methods read values out of the YAML tree and report
// every problem with the position of the offending key or value.
type doc struct {
	l    *loader
	file string
	// aliases maps each alias to the value of the anchor it names.
	aliases map[*ast.AliasNode]ast.Node
}

func (d *doc) errorf(n ast.Node, hint, format string, args ...any) {
	if a, ok := n.(*ast.AliasNode); ok && d.aliases[a] == nil {
		return // an unknown alias, reported once by prepare
	}
	d.report(n, hint, fmt.Sprintf(format, args...))
}

func (d *doc) report(n ast.Node, hint, msg string) {
	line, col := position(n)
	d.l.errs = append(d.l.errs, Error{File: d.file, Line: line, Col: col, Msg: msg, Hint: hint})
}

// position is where n starts in its file: a block mapping starts at its first key.
func position(n ast.Node) (line, col int) {
	switch v := n.(type) {
	case *ast.MappingNode:
		if !v.IsFlowStyle && len(v.Values) > 0 {
			return position(v.Values[0])
		}
	case *ast.MappingValueNode:
		return position(v.Key)
	}
	if tk := n.GetToken(); tk != nil {
		return tk.Position.Line, tk.Position.Column
	}
	return 1, 1
}

// coreTags are the YAML tags a mapping file may use; they change nothing but !!str.
var coreTags = []string{"!!str", "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq"}

// prepare records what each alias points at and reports unknown aliases and tags.
func (d *doc) prepare(root ast.Node) {
	d.aliases = map[*ast.AliasNode]ast.Node{}
	ast.Walk(&anchorCollector{d: d, anchors: map[string]ast.Node{}}, root)
}

type anchorCollector struct {
	d       *doc
	anchors map[string]ast.Node
}

func (c *anchorCollector) Visit(n ast.Node) ast.Visitor {
	switch v := n.(type) {
	case *ast.AnchorNode:
		// The anchor is defined only after its value, so that a value cannot contain itself.
		ast.Walk(c, v.Value)
		c.anchors[v.Name.GetToken().Value] = v.Value
		return nil
	case *ast.AliasNode:
		name := v.Value.GetToken().Value
		if target, ok := c.anchors[name]; ok {
			c.d.aliases[v] = target
		} else {
			c.d.report(v, "define the anchor &"+name+" before this alias", "unknown alias *"+name)
		}
	case *ast.TagNode:
		if !slices.Contains(coreTags, v.Start.Value) {
			c.d.errorf(v, "remove the tag; mapping files use plain YAML values", "unsupported tag %s", v.Start.Value)
		}
	}
	return c
}

// resolve follows anchors, aliases and tags to the node that holds the value. An unknown alias
// (already reported) stays as it is.
func (d *doc) resolve(n ast.Node) ast.Node {
	for {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.MappingKeyNode: // an explicit key: "? key"
			n = v.Value
		case *ast.AliasNode:
			target, ok := d.aliases[v]
			if !ok {
				return n
			}
			n = target
		case *ast.TagNode:
			if v.Start.Value == "!!str" {
				if tk := v.Value.GetToken(); isScalar(v.Value) {
					return ast.String(tk)
				}
			}
			n = v.Value
		default:
			return n
		}
	}
}

func isScalar(n ast.Node) bool {
	switch n.(type) {
	case *ast.StringNode, *ast.LiteralNode, *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode,
		*ast.NullNode, *ast.InfinityNode, *ast.NanNode:
		return true
	}
	return false
}

// kind names the kind of a resolved node for messages.
func kind(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a sequence"
	case *ast.StringNode, *ast.LiteralNode:
		return "a string"
	case *ast.IntegerNode:
		return "an integer"
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "a number"
	case *ast.BoolNode:
		return "a boolean"
	case *ast.NullNode:
		return "empty"
	case *ast.AliasNode:
		return "an unknown alias"
	}
	return n.Type().String()
}

// entry is one key of a mapping with its value.
type entry struct {
	key   string
	keyAt ast.Node
	value ast.Node // resolved
	path  string
	// via is the merge key (<<) that brought the entry into its mapping, nil for its own keys.
	via ast.Node
}

// at is n, a node of e, or the merge key that brought e from elsewhere.
func (e entry) at(n ast.Node) ast.Node {
	if e.via != nil {
		return e.via
	}
	return n
}

// entries lists the keys of a mapping in order, with merge keys (<<) applied, and reports
// duplicate keys. ok is false when n is not a mapping (and that was reported).
func (d *doc) entries(n ast.Node, path string) (es []entry, ok bool) {
	n = d.resolve(n)
	m, ok := n.(*ast.MappingNode)
	if !ok {
		d.errorf(n, "", "%smust be a mapping, not %s", prefix(path), kind(n))
		return nil, false
	}
	pairs := m.Values
	explicit := map[string]ast.Node{}
	for _, p := range pairs {
		if _, merge := p.Key.(*ast.MergeKeyNode); merge {
			continue
		}
		key, ok := d.key(p.Key, path)
		if !ok {
			continue
		}
		if first, dup := explicit[key]; dup {
			line, _ := position(first)
			d.errorf(p.Key, fmt.Sprintf("it is already set at line %d; keep one", line), "%sduplicate key %q", prefix(path), key)
			continue
		}
		explicit[key] = p.Key
		es = append(es, entry{key: key, keyAt: p.Key, value: d.resolve(p.Value), path: join(path, key)})
	}
	for _, p := range pairs {
		if _, merge := p.Key.(*ast.MergeKeyNode); merge {
			for _, e := range d.merged(p.Value, path, explicit) {
				if e.via == nil {
					e.via = p.Key
				}
				es = append(es, e)
			}
		}
	}
	return es, true
}

// merged lists the keys that a merge key (<<: *anchor or <<: [*a, *b]) adds to a mapping:
// those the mapping does not set itself, the first source winning.
func (d *doc) merged(n ast.Node, path string, set map[string]ast.Node) []entry {
	n = d.resolve(n)
	sources := []ast.Node{n}
	if seq, ok := n.(*ast.SequenceNode); ok {
		sources = seq.Values
	}
	var es []entry
	for _, src := range sources {
		src = d.resolve(src)
		if _, ok := src.(*ast.MappingNode); !ok {
			d.errorf(src, "merge a mapping: <<: *anchor", "%s<< must merge a mapping, not %s", prefix(path), kind(src))
			continue
		}
		more, _ := d.entries(src, path)
		for _, e := range more {
			if _, dup := set[e.key]; !dup {
				set[e.key] = e.keyAt
				es = append(es, e)
			}
		}
	}
	return es
}

func (d *doc) key(n ast.Node, path string) (string, bool) {
	n = d.resolve(n)
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
		return v.GetToken().Value, true
	}
	d.errorf(n, "write keys as plain strings", "%sa key must be a string, not %s", prefix(path), kind(n))
	return "", false
}

// str reads a string scalar. ok is false when n is something else (reported).
func (d *doc) str(n ast.Node, path string) (string, bool) {
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.LiteralNode:
		return v.Value.Value, true
	case *ast.NullNode:
		d.errorf(n, "give it a value or remove the key", "%s: has no value", path)
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
		d.errorf(n, fmt.Sprintf("quote it: %q", v.GetToken().Value), "%s: must be a string, not %s", path, kind(n))
	default:
		d.errorf(n, "", "%s: must be a string, not %s", path, kind(n))
	}
	return "", false
}

// stringList reads a sequence of non-empty strings; hint says what belongs in it.
func (d *doc) stringList(e entry, hint string) []string {
	seq, ok := e.value.(*ast.SequenceNode)
	if !ok {
		d.errorf(e.value, hint, "%s: must be a list of strings, not %s", e.path, kind(e.value))
		return nil
	}
	var out []string
	for i, item := range seq.Values {
		path := fmt.Sprintf("%s[%d]", e.path, i)
		if s, ok := d.str(d.resolve(item), path); ok {
			if strings.TrimSpace(s) == "" {
				d.errorf(item, hint, "%s: is empty", path)
				continue
			}
			out = append(out, s)
		}
	}
	return out
}

// scalarText is the text of any scalar as written, for values such as durations that YAML
// may read as numbers.
func (d *doc) scalarText(n ast.Node, path string) (string, bool) {
	switch v := n.(type) {
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return v.GetToken().Value, true
	}
	return d.str(n, path)
}

// jsonValue writes n as JSON, keeping the order of mapping keys.
func (d *doc) jsonValue(n ast.Node, path string, buf *bytes.Buffer) bool {
	n = d.resolve(n)
	switch v := n.(type) {
	case *ast.MappingNode:
		es, ok := d.entries(v, path)
		if !ok {
			return false
		}
		buf.WriteByte('{')
		for i, e := range es {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeJSONString(buf, e.key)
			buf.WriteByte(':')
			if !d.jsonValue(e.value, e.path, buf) {
				return false
			}
		}
		buf.WriteByte('}')
	case *ast.SequenceNode:
		buf.WriteByte('[')
		for i, item := range v.Values {
			if i > 0 {
				buf.WriteByte(',')
			}
			if !d.jsonValue(item, fmt.Sprintf("%s[%d]", path, i), buf) {
				return false
			}
		}
		buf.WriteByte(']')
	case *ast.StringNode:
		writeJSONString(buf, v.Value)
	case *ast.LiteralNode:
		writeJSONString(buf, v.Value.Value)
	case *ast.IntegerNode:
		fmt.Fprint(buf, v.Value)
	case *ast.FloatNode:
		buf.WriteString(strconv.FormatFloat(v.Value, 'g', -1, 64))
	case *ast.BoolNode:
		buf.WriteString(strconv.FormatBool(v.Value))
	case *ast.NullNode:
		buf.WriteString("null")
	case *ast.InfinityNode, *ast.NanNode:
		d.errorf(n, "", "%s: %s is not a JSON number", path, v.GetToken().Value)
		return false
	default:
		d.errorf(n, "", "%s: %s is not a JSON value", path, kind(n))
		return false
	}
	return true
}

func writeJSONString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a string always encodes
	buf.Truncate(buf.Len() - 1) // Encode ends with a newline
}

// join extends a message path: "tools[0]" + "name" = "tools[0].name".
func join(path, key string) string {
	if path == "" {
		return key
	}
	if strings.ContainsAny(key, ". []\"") || key == "" {
		return path + "[" + strconv.Quote(key) + "]"
	}
	return path + "." + key
}

// prefix starts a message about path; the root of a file needs none.
func prefix(path string) string {
	if path == "" {
		return ""
	}
	return path + ": "
}
