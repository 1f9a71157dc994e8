package strictjson

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	tooDeep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	for _, c := range []struct {
		in   string
		want string // "" for strict JSON; else the error, and whether it is a syntax error
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"x"}}`, ""},
		{" \n{\"a\": [1, -2.5e+3, 0, true, false, null, \"\\u00e9\\n\"]}\t ", ""},
		{`{"task\u0049d":"x"}`, ""},
		{`{"a":{"b":1},"c":{"b":2}}`, ""},
		{`"é"`, ""},
		{`"\ud83d\ude00"`, ""},
		{`"\ud83d"`, `syntax: a \u escape of half a character (an unpaired surrogate) (at byte 1)`},
		{`"\ude00\ud83d"`, `syntax: a \u escape of half a character (an unpaired surrogate) (at byte 1)`},
		{`"\ud83d\u0041"`, `syntax: a \u escape of half a character (an unpaired surrogate) (at byte 1)`},
		{deep, ""},
		{`{"a":1}}`, "syntax: data after the JSON value (at byte 7)"},
		{`{"a":1} {}`, "syntax: data after the JSON value (at byte 8)"},
		{"\xef\xbb\xbf{}", "syntax: a byte order mark before the JSON text (at byte 0)"},
		{"{\"a\":\"\xff\"}", "syntax: bytes that are not UTF-8 (at byte 6)"},
		{`{"method":"a","method":"b"}`, `repeat: the member name "method" appears twice in one object (names may not repeat, whatever their case or escapes) (at byte 14)`},
		{`{"method":"a","METHOD":"b"}`, `repeat: the member name "METHOD" appears twice in one object (names may not repeat, whatever their case or escapes) (at byte 14)`},
		{`{"taskId":"a","task\u0049d":"b"}`, `repeat: the member name "taskId" appears twice in one object (names may not repeat, whatever their case or escapes) (at byte 14)`},
		{`{"taskId":"a","taſkId":"b"}`, `repeat: the member name "taſkId" appears twice in one object (names may not repeat, whatever their case or escapes) (at byte 14)`},
		{`{"p":{"q":[{"x":1,"X":2}]}}`, `repeat: the member name "X" appears twice in one object (names may not repeat, whatever their case or escapes) (at byte 18)`},
		{tooDeep, "syntax: objects and arrays nested deeper than 1000 (at byte 1000)"},
		{``, "syntax: the JSON text ends where a value should be (at byte 0)"},
		{`{"a":01}`, `syntax: an invalid character '1' after an object member (at byte 6)`},
		{`{"a":-}`, "syntax: an invalid number (at byte 6)"},
		{`{"a":"\x"}`, `syntax: an invalid escape \x (at byte 6)`},
		{"{\"a\":\"\x01\"}", "syntax: a control character in a string (at byte 6)"},
		{`{a:1}`, "syntax: an object member without a quoted name (at byte 1)"},
		{`[1,]`, "syntax: an invalid character ']' where a value should be (at byte 3)"},
		{`{"a":tru}`, "syntax: an invalid literal (want true) (at byte 5)"},
	} {
		err := Check([]byte(c.in))
		got := ""
		var e *Error
		if errors.As(err, &e) {
			got = "repeat: " + e.Error()
			if e.Syntax {
				got = "syntax: " + e.Error()
			}
		}
		if got != c.want {
			t.Errorf("%.60q: %s, want %s", c.in, got, c.want)
		}
		// Every text encoding/json refuses is refused here too.
		if c.want == "" && !json.Valid([]byte(c.in)) {
			t.Errorf("%.60q passed, but it is not JSON", c.in)
		}
	}
}

// TestManyMembers: an object of many members is checked in time that grows with its size, and
// its names still may not repeat.
func TestManyMembers(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 100000 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"m` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + `_` + itoa(i) + `":1`)
	}
	if err := Check([]byte(b.String() + "}")); err != nil {
		t.Fatal(err)
	}
	if err := Check([]byte(b.String() + `,"M_0":2,"m_0":3}`)); err == nil || !strings.Contains(err.Error(), `"m_0" appears twice`) {
		t.Fatalf("a repeated name among many: %v", err)
	}
}

// TestRepeatsAcrossTheSmallObjectBound: a name is refused whichever side of the point where the
// names move into a map its first and second appearances fall.
func TestRepeatsAcrossTheSmallObjectBound(t *testing.T) {
	object := func(n int, last string) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(`"n` + itoa(i) + `":1,`)
		}
		return "{" + b.String() + `"` + last + `":2}`
	}
	for _, n := range []int{smallObject - 1, smallObject, smallObject + 1, smallObject + 5} {
		if err := Check([]byte(object(n, "N0"))); err == nil || !strings.Contains(err.Error(), `"N0" appears twice`) {
			t.Errorf("%d members, then the first again: %v", n, err)
		}
		if err := Check([]byte(object(n, "fresh"))); err != nil {
			t.Errorf("%d members, then a new one: %v", n, err)
		}
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[1,"x",{"b":null}]`, `{"a":1,"A":2}`, "\"\\ud800\"", `1e5`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if Check([]byte(s)) == nil && !json.Valid([]byte(s)) {
			t.Fatalf("%q passed, but encoding/json refuses it", s)
		}
	})
}

func TestMembers(t *testing.T) {
	data := []byte(` {"a": {"b": [1, {"c": 2}]}, "d\u0065": "x" , "n":null}`)
	m, err := Members(data)
	if err != nil || len(m) != 3 || string(m["a"]) != `{"b": [1, {"c": 2}]}` || string(m["de"]) != `"x"` || string(m["n"]) != "null" {
		t.Fatalf("%q %v", m, err)
	}
	if &m["a"][0] != &data[7] {
		t.Error("a member's value is a copy")
	}
	for _, notObject := range []string{`[{"a":1}]`, `"x"`, `1`} {
		if m, err := Members([]byte(notObject)); m != nil || err != nil {
			t.Errorf("%s: %v %v", notObject, m, err)
		}
	}
	if _, err := Members([]byte(`{"a":1,"A":2}`)); err == nil {
		t.Error("a repeated name passed")
	}
}

// EachMember hands the outermost object's members in their order, and only those.
func TestEachMember(t *testing.T) {
	var got []string
	isObject, err := EachMember([]byte(`{"b": {"x": 1}, "\u0061": [2]}`), func(name []byte, value json.RawMessage) {
		got = append(got, string(name)+"="+string(value))
	})
	if want := []string{`b={"x": 1}`, `a=[2]`}; !isObject || err != nil || !slices.Equal(got, want) {
		t.Errorf("members %q, object %v, %v; want %q", got, isObject, err, want)
	}
	if isObject, err := EachMember([]byte(`[{"a":1}]`), func([]byte, json.RawMessage) { t.Error("a member of an array's object") }); isObject || err != nil {
		t.Errorf("an array: object %v, %v", isObject, err)
	}
}

// TestString reads strings as encoding/json does, with or without escapes, and nothing else.
func TestString(t *testing.T) {
	for _, raw := range []string{`"plain"`, `""`, `"é"`, `"a\"b"`, `"\u00e9\n"`, `"<&>"`, "\"a\tb\"", `"a"b"`, `5`, `null`, `{"a":1}`, `"`, ``, "\"\xff\""} {
		var want string
		wantOK := json.Unmarshal([]byte(raw), &want) == nil && strings.HasPrefix(raw, `"`)
		got, ok := String([]byte(raw))
		if ok != wantOK || got != want {
			t.Errorf("String(%q) = %q, %v; encoding/json reads %q, %v", raw, got, ok, want, wantOK)
		}
	}
}
