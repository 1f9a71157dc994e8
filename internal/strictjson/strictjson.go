// Package strictjson checks that a JSON text reads the same to every decoder: one value in UTF-8,
// nothing before or after it but white space (no byte order mark, no trailing data), no deeper
// than a bound, and no object with two members whose names are equal once unescaped and
// case-folded. Decoders disagree on exactly those texts: encoding/json matches struct fields
// case-insensitively and refuses trailing data, go-sdk's decoder matches them case-sensitively
// and ignores it, and a repeated name is the first member to one and the last to another.
package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Error says why a text is not strict JSON. Syntax is true when it is not JSON at all (RFC 8259);
// false when it is JSON that decoders may read differently (a repeated member name).
type Error struct {
	Offset int
	Syntax bool
	Msg    string
}

func (e *Error) Error() string { return fmt.Sprintf("%s (at byte %d)", e.Msg, e.Offset) }

// MaxDepth is the deepest nesting of objects and arrays Check accepts: go-sdk's own bound.
const MaxDepth = 1000

// Check returns nil when data is strict JSON, else an *Error.
func Check(data []byte) error {
	return (&scanner{data: data}).text()
}

// Members checks data as Check does and, when it is an object, returns its members by their
// unescaped names, each value a slice of data (nothing is copied); nil when it is no object.
func Members(data []byte) (map[string]json.RawMessage, error) {
	members := map[string]json.RawMessage{}
	isObject, err := EachMember(data, func(name []byte, value json.RawMessage) { members[string(name)] = value })
	if err != nil || !isObject {
		return nil, err
	}
	return members, nil
}

// EachMember checks data as Check does and, when it is an object, hands each of its members to
// member as it reads them: the unescaped name and the value, slices that member may not keep
// (the value's is of data). It reports whether data is an object; member is called before data
// is found strict or not, so that a caller uses what it was handed only when the error is nil.
func EachMember(data []byte, member func(name []byte, value json.RawMessage)) (isObject bool, err error) {
	s := &scanner{data: data, member: member}
	if err := s.text(); err != nil {
		return false, err
	}
	return s.isObject, nil
}

func (s *scanner) text() error {
	data := s.data
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		return &Error{Syntax: true, Msg: "a byte order mark before the JSON text"}
	}
	if !utf8.Valid(data) {
		return &Error{Offset: invalidUTF8At(data), Syntax: true, Msg: "bytes that are not UTF-8"}
	}
	if err := s.value(0); err != nil {
		return err
	}
	if s.space(); s.i < len(s.data) {
		return s.fail(true, "data after the JSON value")
	}
	return nil
}

func invalidUTF8At(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(data)
}

type scanner struct {
	data []byte
	i    int
	// member, when not nil, is handed the members of the text's outermost value, if an object.
	member   func(name []byte, value json.RawMessage)
	isObject bool
}

func (s *scanner) fail(syntax bool, format string, args ...any) *Error {
	return &Error{Offset: s.i, Syntax: syntax, Msg: fmt.Sprintf(format, args...)}
}

func (s *scanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) value(depth int) error {
	s.space()
	if s.i >= len(s.data) {
		return s.fail(true, "the JSON text ends where a value should be")
	}
	switch c := s.data[s.i]; {
	case c == '{' || c == '[':
		if depth >= MaxDepth {
			return s.fail(true, "objects and arrays nested deeper than %d", MaxDepth)
		}
		if c == '{' {
			return s.object(depth + 1)
		}
		return s.array(depth + 1)
	case c == '"':
		_, _, err := s.str()
		return err
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return s.fail(true, "an invalid character %q where a value should be", s.data[s.i])
}

func (s *scanner) literal(word string) error {
	if len(s.data)-s.i < len(word) || string(s.data[s.i:s.i+len(word)]) != word {
		return s.fail(true, "an invalid literal (want %s)", word)
	}
	s.i += len(word)
	return nil
}

func (s *scanner) number() error {
	start := s.i
	if s.data[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.data) && s.data[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return s.fail(true, "an invalid number")
	}
	if s.i < len(s.data) && s.data[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return s.fail(true, "an invalid number")
		}
	}
	if s.i < len(s.data) && (s.data[s.i] == 'e' || s.data[s.i] == 'E') {
		s.i++
		if s.i < len(s.data) && (s.data[s.i] == '+' || s.data[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return s.fail(true, "an invalid number")
		}
	}
	if s.i == start {
		return s.fail(true, "an invalid number")
	}
	return nil
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// str reads a string; raw is its text between the quotes, escaped whether it holds an escape.
func (s *scanner) str() (raw []byte, escaped bool, err error) {
	s.i++ // the opening quote
	start := s.i
	for s.i < len(s.data) {
		switch c := s.data[s.i]; {
		case c == '"':
			raw = s.data[start:s.i]
			s.i++
			return raw, escaped, nil
		case c == '\\':
			escaped = true
			if s.i+1 >= len(s.data) {
				return nil, false, s.fail(true, "a string that does not end")
			}
			switch s.data[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				r, ok := s.hex4(s.i)
				switch {
				case !ok:
					return nil, false, s.fail(true, "an invalid \\u escape")
				case utf16.IsSurrogate(r):
					// Decoders replace half a character differently (or not at all).
					low, ok := s.hex4(s.i + 6)
					if r >= 0xDC00 || !ok || utf16.DecodeRune(r, low) == unicode.ReplacementChar {
						return nil, false, s.fail(true, "a \\u escape of half a character (an unpaired surrogate)")
					}
					s.i += 6
				}
				s.i += 6
			default:
				return nil, false, s.fail(true, "an invalid escape \\%c", s.data[s.i+1])
			}
		case c < 0x20:
			return nil, false, s.fail(true, "a control character in a string")
		default:
			s.i++
		}
	}
	return nil, false, s.fail(true, "a string that does not end")
}

// hex4 reads the code unit of the \u escape at i.
func (s *scanner) hex4(i int) (rune, bool) {
	if len(s.data)-i < 6 || s.data[i] != '\\' || s.data[i+1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range s.data[i+2 : i+6] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

func (s *scanner) array(depth int) error {
	s.i++
	if s.space(); s.i < len(s.data) && s.data[s.i] == ']' {
		s.i++
		return nil
	}
	for {
		if err := s.value(depth); err != nil {
			return err
		}
		s.space()
		if s.i >= len(s.data) {
			return s.fail(true, "an array that does not end")
		}
		switch s.data[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.fail(true, "an invalid character %q after an array element", s.data[s.i])
		}
	}
}

// smallObject is how many members an object may have before their names are kept in a map.
const smallObject = 16

func (s *scanner) object(depth int) error {
	s.isObject = s.isObject || depth == 1
	s.i++
	if s.space(); s.i < len(s.data) && s.data[s.i] == '}' {
		s.i++
		return nil
	}
	var small [smallObject][]byte // the names of a small object, slices of data
	names := small[:0]
	var seen map[string]bool
	for {
		if s.space(); s.i >= len(s.data) || s.data[s.i] != '"' {
			return s.fail(true, "an object member without a quoted name")
		}
		at := s.i
		name, escaped, err := s.str()
		if err != nil {
			return err
		}
		if escaped {
			var unescaped string
			if json.Unmarshal(s.data[at:s.i], &unescaped) != nil {
				return &Error{Offset: at, Syntax: true, Msg: "an invalid member name"}
			}
			name = []byte(unescaped)
		}
		repeated := false
		switch {
		case seen != nil:
			key := fold(string(name))
			repeated, seen[key] = seen[key], true
		case len(names) < smallObject:
			repeated = slices.ContainsFunc(names, func(n []byte) bool { return bytes.EqualFold(n, name) })
			names = append(names, name)
		default:
			seen = make(map[string]bool, 4*smallObject)
			for _, n := range names {
				seen[fold(string(n))] = true
			}
			key := fold(string(name))
			repeated, seen[key] = seen[key], true
		}
		if repeated {
			return &Error{Offset: at, Msg: fmt.Sprintf("the member name %q appears twice in one object (names may not repeat, whatever their case or escapes)", string(name))}
		}
		if s.space(); s.i >= len(s.data) || s.data[s.i] != ':' {
			return s.fail(true, "an object member without ':' after its name")
		}
		s.i++
		s.space()
		start := s.i
		if err := s.value(depth); err != nil {
			return err
		}
		if depth == 1 && s.member != nil {
			s.member(name, s.data[start:s.i])
		}
		s.space()
		if s.i >= len(s.data) {
			return s.fail(true, "an object that does not end")
		}
		switch s.data[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.fail(true, "an invalid character %q after an object member", s.data[s.i])
		}
	}
}

// fold is name with every letter replaced by the smallest of the letters that fold to it, so that
// names strings.EqualFold (and encoding/json) hold equal have one fold.
func fold(name string) string {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= 0x80 || c >= 'a' && c <= 'z' {
			return foldRunes(name)
		}
	}
	return name
}

func foldRunes(name string) string {
	out := make([]rune, 0, len(name))
	for _, r := range name {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		out = append(out, least)
	}
	return string(out)
}

// String reads raw, a JSON value, as a string; false when it is no string. A string without
// escapes is read without encoding/json, which costs a poll a reflected decode per member.
func String(raw []byte) (string, bool) {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && !bytes.ContainsAny(raw[1:n-1], "\\\"") && utf8.Valid(raw[1:n-1]) && !hasControl(raw[1:n-1]) {
		return string(raw[1 : n-1]), true
	}
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}
