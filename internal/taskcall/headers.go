package taskcall

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// HeadersEnv names the variable that holds headers for every request, one `Name: value` a line:
// a script's way to pass credentials without putting them on the command line.
const HeadersEnv = "TASKGATE_HEADERS"

// ParseHeaders reads the headers of $TASKGATE_HEADERS (env, one a line) and of --header (flags),
// each `Name: value` as curl takes them. A --header replaces the variable's headers of its name;
// several --header of one name are all sent. Errors never quote a value, which may be a secret.
func ParseHeaders(env string, flags []string) (http.Header, error) {
	fromEnv := http.Header{}
	for i, line := range strings.Split(env, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		name, value, err := parseHeader(line)
		if err != nil {
			return nil, fmt.Errorf("$%s, line %d: %v; write one header a line, like Authorization: Bearer KEY", HeadersEnv, i+1, err)
		}
		fromEnv.Add(name, value)
	}
	fromFlags := http.Header{}
	for _, f := range flags {
		name, value, err := parseHeader(f)
		if err != nil {
			return nil, fmt.Errorf("--header: %v; pass NAME: VALUE, like --header 'Authorization: Bearer KEY'", err)
		}
		fromFlags.Add(name, value)
	}
	for name, values := range fromFlags {
		fromEnv[name] = values
	}
	return fromEnv, nil
}

func parseHeader(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	switch {
	case !ok:
		return "", "", errors.New("a header without a colon")
	case !httpguts.ValidHeaderFieldName(name):
		return "", "", errors.New("what comes before the colon is not a header name")
	case !httpguts.ValidHeaderFieldValue(value):
		return "", "", fmt.Errorf("the value of %s has a control character", name)
	}
	return http.CanonicalHeaderKey(name), value, nil
}
