package mapping

import (
	"fmt"
	"strings"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
)

const envHint = "write ${VAR} or ${VAR:-default} for an environment variable, $$ for a literal $"

// envError is a problem with an environment reference; hint says what to do.
type envError struct{ msg, hint string }

func (e *envError) Error() string { return e.msg }

// expandEnv replaces ${VAR} with the value of VAR, which must be set, and ${VAR:-default} with
// the value of VAR or, when it is unset or empty, default (plain text). $$ is a literal $.
func expandEnv(s string, env adapters.Env) (string, *envError) {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		s = s[i+1:]
		switch {
		case strings.HasPrefix(s, "$"):
			b.WriteByte('$')
			s = s[1:]
		case strings.HasPrefix(s, "{"):
			end := strings.IndexByte(s, '}')
			if end < 0 {
				return "", &envError{fmt.Sprintf("%q has no closing }", "$"+s), envHint}
			}
			ref := s[1:end]
			s = s[end+1:]
			name, def, hasDefault := strings.Cut(ref, ":-")
			if !driver.ValidEnvName(name) {
				return "", &envError{fmt.Sprintf("%q is not a valid environment variable name", name), envHint}
			}
			if strings.Contains(def, "${") {
				return "", &envError{"a default cannot hold another ${VAR}", "defaults are plain text"}
			}
			v, set := env.LookupEnv(name)
			switch {
			case hasDefault && v == "":
				v = def
			case !set:
				return "", &envError{
					fmt.Sprintf("environment variable %s is not set", name),
					fmt.Sprintf("set it, or give a default: ${%s:-VALUE}", name),
				}
			}
			b.WriteString(v)
		default:
			return "", &envError{`a "$" that starts no ${VAR}`, envHint}
		}
	}
}
