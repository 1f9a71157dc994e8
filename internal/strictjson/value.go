package strictjson

import (
	"encoding/json"
	"strconv"
)

// Value decodes raw, a JSON text that Check accepts, as encoding/json decodes it into an any:
// objects as map[string]any, arrays as []any, numbers as float64. It reads without reflection,
// which costs a poll's _meta a third of what json.Unmarshal does; false when raw is not strict
// JSON or holds a number a float64 cannot hold.
func Value(raw []byte) (any, bool) {
	if Check(raw) != nil {
		return nil, false
	}
	d := &decoder{data: raw}
	v, ok := d.value()
	return v, ok
}

// Object reads raw as Value does, when it is an object.
func Object(raw []byte) (map[string]any, bool) {
	v, ok := Value(raw)
	m, isObject := v.(map[string]any)
	return m, ok && isObject
}

// decoder reads a text Check accepted, so it meets no syntax error.
type decoder struct {
	data []byte
	i    int
}

func (d *decoder) space() {
	for d.i < len(d.data) && (d.data[d.i] == ' ' || d.data[d.i] == '\t' || d.data[d.i] == '\n' || d.data[d.i] == '\r') {
		d.i++
	}
}

func (d *decoder) value() (any, bool) {
	d.space()
	switch c := d.data[d.i]; c {
	case '{':
		return d.object()
	case '[':
		return d.array()
	case '"':
		return d.str()
	case 't':
		d.i += len("true")
		return true, true
	case 'f':
		d.i += len("false")
		return false, true
	case 'n':
		d.i += len("null")
		return nil, true
	}
	start := d.i
	for d.i < len(d.data) && isNumberByte(d.data[d.i]) {
		d.i++
	}
	f, err := strconv.ParseFloat(string(d.data[start:d.i]), 64)
	return f, err == nil
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

func (d *decoder) str() (any, bool) {
	start := d.i
	d.i++
	escaped := false
	for d.data[d.i] != '"' {
		if d.data[d.i] == '\\' {
			escaped = true
			d.i++
		}
		d.i++
	}
	d.i++
	if !escaped {
		// Check accepted only UTF-8, and encoding/json copies such a string as it is.
		return string(d.data[start+1 : d.i-1]), true
	}
	var s string
	return s, json.Unmarshal(d.data[start:d.i], &s) == nil
}

func (d *decoder) object() (any, bool) {
	d.i++
	m := map[string]any{}
	if d.space(); d.data[d.i] == '}' {
		d.i++
		return m, true
	}
	for {
		d.space()
		name, ok := d.str()
		if !ok {
			return nil, false
		}
		d.space()
		d.i++ // the colon
		v, ok := d.value()
		if !ok {
			return nil, false
		}
		m[name.(string)] = v
		d.space()
		d.i++
		if d.data[d.i-1] == '}' {
			return m, true
		}
	}
}

func (d *decoder) array() (any, bool) {
	d.i++
	a := []any{}
	if d.space(); d.data[d.i] == ']' {
		d.i++
		return a, true
	}
	for {
		v, ok := d.value()
		if !ok {
			return nil, false
		}
		a = append(a, v)
		d.space()
		d.i++
		if d.data[d.i-1] == ']' {
			return a, true
		}
	}
}
