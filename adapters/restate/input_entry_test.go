package restate

import (
	"strings"
	"testing"
)

// TestInputOf: the request body is read out of an Input entry in both ways of writing bytes, and
// an entry that holds none is an error that does not repeat the entry (its headers, its input).
func TestInputOf(t *testing.T) {
	for _, c := range []struct{ entry, want, err string }{
		{`{"Command":{"Input":{"headers":[{"name":"authorization","value":"Bearer s3cret"}],"payload":[123,125],"name":""}}}`, `{}`, ""},
		{`{"Command":{"Input":{"payload":"eyJhIjoxfQ=="}}}`, `{"a":1}`, ""},
		{`{"Command":{"Input":{"payload":[]}}}`, `null`, ""},
		{`{"Command":{"Input":{"payload":null}}}`, `null`, ""},
		{`{"Command":{"Input":{"payload":[115,51,99,114,101,116]}}}`, "", "its input is not JSON"},
		{`{"Command":{"Input":{"payload":[123,256]}}}`, "", "the payload of its Input entry is not bytes"},
		{`{"Command":{"Input":{"payload":"s3cret!"}}}`, "", "the payload of its Input entry is not base64"},
		{`{"Command":{"Run":{"payload":[123,125]}}}`, "", "its first journal entry is not an Input command of journal version 2, the one taskgate reads"},
		{`s3cret`, "", "its first journal entry is not an Input command of journal version 2, the one taskgate reads"},
	} {
		got, err := inputOf(c.entry)
		switch {
		case c.err == "" && (err != nil || string(got) != c.want):
			t.Errorf("inputOf(%s) = %s, %v; want %s", c.entry, got, err, c.want)
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("inputOf(%s): %v, want %s", c.entry, err, c.err)
		case err != nil && strings.Contains(err.Error(), "s3cret"):
			t.Errorf("inputOf(%s): the error repeats the entry: %v", c.entry, err)
		}
	}
}
