package taskcall

import (
	"net/http"
	"reflect"
	"testing"
)

func TestParseHeaders(t *testing.T) {
	got, err := ParseHeaders("authorization: Bearer from-env\n\nX-Team: ops\n", []string{"Authorization:Bearer from-flag", "x-trace: a", "X-Trace: b"})
	want := http.Header{"Authorization": {"Bearer from-flag"}, "X-Team": {"ops"}, "X-Trace": {"a", "b"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	for _, tc := range []struct {
		env   string
		flags []string
		want  string
	}{
		{"", []string{"Bearer s3cret"}, "--header: a header without a colon; pass NAME: VALUE, like --header 'Authorization: Bearer KEY'"},
		{"", []string{"Authorization Bearer s3cret: x"}, "--header: what comes before the colon is not a header name; pass NAME: VALUE, like --header 'Authorization: Bearer KEY'"},
		{"X-Ok: 1\nAuthorization: Bearer s3cret\x7f", nil, "$TASKGATE_HEADERS, line 2: the value of Authorization has a control character; write one header a line, like Authorization: Bearer KEY"},
	} {
		if _, err := ParseHeaders(tc.env, tc.flags); err == nil || err.Error() != tc.want {
			t.Errorf("ParseHeaders(%q, %q): %v, want %q", tc.env, tc.flags, err, tc.want)
		}
	}
}
