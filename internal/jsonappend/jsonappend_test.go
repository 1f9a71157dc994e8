package jsonappend

import (
	"bytes"
	"encoding/json"
	"testing"
)

// encodingJSON is what encoding/json writes for v with HTML escaping off.
func encodingJSON(t testing.TB, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

var strings = []string{
	"", "plain", `quote " and backslash \`, "<html> & 'apostrophes'", "\x00\x01\x1f\x7f",
	"\b\f\n\r\t", "é, 世界, 🎉", "\u2028 and \u2029", "\xff\xfe invalid", "a\xc3", "\xed\xa0\x80 surrogate",
	"ends with escape\n",
}

func TestStringAsEncodingJSON(t *testing.T) {
	for _, s := range strings {
		if got, want := String([]byte("x"), s), append([]byte("x"), encodingJSON(t, s)...); !bytes.Equal(got, want) {
			t.Errorf("String(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzString(f *testing.F) {
	for _, s := range strings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := String(nil, s), encodingJSON(t, s); !bytes.Equal(got, want) {
			t.Errorf("String(%q) = %s, want %s", s, got, want)
		}
	})
}
