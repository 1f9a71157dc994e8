// Package jsonappend writes JSON strings into a byte slice as encoding/json writes them with HTML
// escaping off (json.Encoder.SetEscapeHTML(false)), byte for byte, without reflection: for the
// answers written on every poll, where encoding/json's reflection was a fifth of taskgate's CPU.
package jsonappend

import "unicode/utf8"

const hex = "0123456789abcdef"

// String appends s as a JSON string: `"` and `\` escaped, control characters as \b, \f, \n, \r,
// \t or \u00XX, invalid UTF-8 as \ufffd, and U+2028 and U+2029 escaped, as encoding/json does.
func String(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}
