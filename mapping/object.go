package mapping

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
)

// object is a mapping of a file whose keys were checked against the keys it allows.
type object struct {
	d    *doc
	at   ast.Node
	path string
	es   []entry // in the order of the file, merged keys last
	m    map[string]entry
	// unknown counts the keys that were reported as not allowed.
	unknown int
}

// object reads a mapping and reports each key that allowed lacks, with renamed's word on keys of
// earlier versions of the format.
func (d *doc) object(n ast.Node, path string, allowed []string, renamed map[string]string) (*object, bool) {
	es, ok := d.entries(n, path)
	if !ok {
		return nil, false
	}
	o := &object{d: d, at: d.resolve(n), path: path, m: map[string]entry{}}
	for _, e := range es {
		if !slices.Contains(allowed, e.key) {
			hint, moved := renamed[e.key]
			if !moved {
				hint = suggest(e.key, allowed, "known keys: "+strings.Join(allowed, ", "))
			}
			d.errorf(e.keyAt, hint, "%sunknown key %q", prefix(path), e.key)
			o.unknown++
			continue
		}
		o.es = append(o.es, e)
		o.m[e.key] = e
	}
	return o, true
}

// str reads an optional string, with environment references expanded when expand is set. ok is
// false when the key is absent or its value is wrong (which is reported).
func (o *object) str(key string, expand bool) (s string, e entry, ok bool) {
	e, ok = o.m[key]
	if !ok {
		return "", e, false
	}
	if s, ok = o.d.str(e.value, e.path); !ok {
		return "", e, false
	}
	if expand {
		return o.expand(s, e)
	}
	return s, e, true
}

func (o *object) expand(s string, e entry) (string, entry, bool) {
	s, ee := expandEnv(s, o.d.l.env)
	if ee != nil {
		o.d.errorf(e.value, ee.hint, "%s: %s", e.path, ee.msg)
		return "", e, false
	}
	return s, e, true
}

// need reads a string that must be present and not empty; hint says what to write.
func (o *object) need(key, hint string, expand bool) (string, entry, bool) {
	if _, present := o.m[key]; !present {
		o.d.errorf(o.at, hint, "%smissing required key %q", prefix(o.path), key)
		return "", entry{}, false
	}
	s, e, ok := o.str(key, expand)
	if ok && strings.TrimSpace(s) == "" {
		o.d.errorf(e.value, hint, "%s: is empty", e.path)
		return "", e, false
	}
	return s, e, ok
}

// duration reads an optional Go duration of at least least. With unlimited set, the word
// unlimited stands for 0. ok is false when the key is absent or its value is wrong (reported).
func (o *object) duration(key string, least time.Duration, expand, unlimited bool) (time.Duration, bool) {
	e, ok := o.m[key]
	if !ok {
		return 0, false
	}
	s, ok := o.d.scalarText(e.value, e.path)
	if !ok {
		return 0, false
	}
	if expand {
		if s, _, ok = o.expand(s, e); !ok {
			return 0, false
		}
	}
	hint := durationHint
	if unlimited {
		if s == "unlimited" {
			return 0, true
		}
		hint += ", or unlimited"
	}
	v, err := time.ParseDuration(s)
	switch {
	case err != nil:
		o.d.errorf(e.value, hint, "%s: %q is not a duration", e.path, s)
	case v < least && least == time.Nanosecond:
		o.d.errorf(e.value, hint, "%s: must be positive, not %s", e.path, s)
	case v < least:
		o.d.errorf(e.value, hint, "%s: must be at least %s, not %s", e.path, least, s)
	default:
		return v, true
	}
	return 0, false
}

// durationOr is duration, or def when the key is absent or wrong.
func (o *object) durationOr(key string, def, least time.Duration, unlimited bool) time.Duration {
	if v, ok := o.duration(key, least, false, unlimited); ok {
		return v
	}
	return def
}

// block reads the mapping under key, whose keys are the properties of schema.
func (o *object) block(key string, schema map[string]any, hint string) (*block, bool) {
	e, ok := o.m[key]
	if !ok {
		return nil, false
	}
	switch e.value.(type) {
	case *ast.MappingNode:
	case *ast.NullNode:
		o.d.errorf(e.value, hint, "%s: has no value", e.path)
		return nil, false
	default:
		o.d.errorf(e.value, hint, "%s: must be a mapping, not %s", e.path, kind(e.value))
		return nil, false
	}
	nested, ok := o.d.object(e.value, e.path, keysOf(schema), nil)
	if !ok {
		return nil, false
	}
	return &block{o: nested, schema: schema}, true
}

// block is an object as a driver reads it (adapters.Block): strings and durations are expanded,
// and nested mappings allow the keys their part of the driver's schema declares.
type block struct {
	o      *object
	schema map[string]any
}

var _ adapters.Block = (*block)(nil)

func (b *block) Has(key string) bool {
	_, ok := b.o.m[key]
	return ok
}

func (b *block) String(key string) (string, bool) {
	s, _, ok := b.o.str(key, true)
	return s, ok
}

func (b *block) Required(key, hint string) (string, bool) {
	s, _, ok := b.o.need(key, hint, true)
	return s, ok
}

func (b *block) File(key string) (string, bool) {
	s, e, ok := b.o.str(key, true)
	if !ok || s == "" {
		return s, ok
	}
	return b.o.d.needFile(e, s), true
}

func (b *block) EnvName(key, hint string) (string, bool) {
	name, e, ok := b.o.str(key, false)
	switch {
	case !ok || name == "":
		return "", false
	case !driver.ValidEnvName(name):
		// The value is not repeated: it may be the secret itself.
		b.o.d.errorf(e.value, hint, "%s: must be the name of an environment variable", e.path)
		return "", false
	}
	b.o.d.needEnv(e, name)
	return name, true
}

func (b *block) Bool(key string) (bool, bool) {
	e, ok := b.o.m[key]
	if !ok {
		return false, false
	}
	v, ok := e.value.(*ast.BoolNode)
	if !ok {
		b.o.d.errorf(e.value, "", "%s: must be true or false, not %s", e.path, kind(e.value))
		return false, false
	}
	return v.Value, true
}

func (b *block) Duration(key string) (time.Duration, bool) {
	return b.o.duration(key, time.Nanosecond, true, false)
}

func (b *block) Block(key, hint string) (adapters.Block, bool) {
	nested, ok := b.o.block(key, jsonObject(b.schema, "properties", key), hint)
	if !ok {
		return nil, false
	}
	return nested, true
}

func (b *block) IsBlock(key string) bool {
	e, ok := b.o.m[key]
	if !ok {
		return false
	}
	_, ok = e.value.(*ast.MappingNode)
	return ok
}

func (b *block) Errorf(key, hint, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if e, ok := b.o.m[key]; ok {
		b.o.d.errorf(e.value, hint, "%s: %s", e.path, msg)
		return
	}
	b.o.d.errorf(b.o.at, hint, "%s%s", prefix(b.o.path), msg)
}
