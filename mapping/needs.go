package mapping

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/goccy/go-yaml/ast"

	"github.com/taskgate/taskgate/adapters"
)

// need is a file or an environment variable that a mapping names for serving to read: a
// certificate, a public key, the variable that holds a key. Loading does not check them, since a
// mapping may be loaded where it is not served; CheckNeeds does.
type need struct {
	file, env string // one of them
	at        Error  // where the mapping names it; Msg is the key's path
}

// needFile records the file a value names, relative to the mapping file unless absolute, and
// returns its path.
func (d *doc) needFile(e entry, file string) string {
	if !filepath.IsAbs(file) {
		file = filepath.Join(filepath.Dir(d.file), file)
	}
	d.l.needs = append(d.l.needs, need{file: file, at: d.where(e.value, e.path)})
	return file
}

// needEnv records the environment variable a value names.
func (d *doc) needEnv(e entry, name string) {
	d.l.needs = append(d.l.needs, need{env: name, at: d.where(e.value, e.path)})
}

func (d *doc) where(n ast.Node, path string) Error {
	line, col := position(n)
	return Error{File: d.file, Line: line, Col: col, Msg: path}
}

// CheckNeeds checks that every file the mapping names can be read and every environment variable
// it names is set in env (nil: the process's environment), as serving will need them. Each
// problem is an Error at the key that names the file or the variable.
func (s *Set) CheckNeeds(env adapters.Env) error {
	errs := &Errors{}
	for _, n := range s.needs {
		e := n.at
		switch {
		case n.file != "":
			f, err := os.Open(n.file)
			if err != nil {
				e.Msg, e.Hint = fmt.Sprintf("%s: %v", e.Msg, err), "serving reads it: fix the path, which is relative to the mapping file, or put the file there"
				errs.List = append(errs.List, e)
				continue
			}
			f.Close()
		default:
			if v, _ := env.LookupEnv(n.env); v == "" {
				e.Msg, e.Hint = fmt.Sprintf("%s: $%s is not set", e.Msg, n.env), "serving reads the secret from it: export it where taskgate runs"
				errs.List = append(errs.List, e)
			}
		}
	}
	if len(errs.List) == 0 {
		return nil
	}
	errs.sort()
	return errs
}
