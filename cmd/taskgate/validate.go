package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/taskgate/taskgate/mapping"
)

const validateUsage = `usage: taskgate validate FILE_OR_DIR...

Checks mapping files (a folder: its *.yaml and *.yml files) as serve reads them, with the
environment variables they use, and lists every problem as file:line:col: message (hint).
Exit status: 0 valid, 1 problems found, 2 usage error.
`

// runValidate is `taskgate validate`.
func runValidate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), validateUsage) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	paths := fs.Args()
	if len(paths) == 0 {
		fmt.Fprint(stderr, "taskgate validate: no mapping files given\n\n"+validateUsage)
		return 2
	}
	set, err := mapping.Load(paths...)
	if err != nil {
		var errs *mapping.Errors
		if !errors.As(err, &errs) {
			fmt.Fprintln(stderr, "taskgate validate:", err)
			return 1
		}
		for _, e := range errs.List {
			fmt.Fprintln(stderr, e)
		}
		return 1
	}
	fmt.Fprintf(stdout, "ok: %s, %s in %s\n", count(len(set.Tools), "tool"), count(len(set.Engines), "engine"), strings.Join(paths, ", "))
	return 0
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
