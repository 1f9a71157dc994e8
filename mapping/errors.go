package mapping

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Error is one problem in a mapping file. Line and Col are 1-based; both are zero when the
// problem is with the path itself (it does not exist, or a folder holds no mapping files).
type Error struct {
	File      string
	Line, Col int
	Msg       string
	// Hint says what to do about it; it may be empty.
	Hint string
}

// Error formats e as "file:line:col: msg (hint)".
func (e Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Hint != "" {
		fmt.Fprintf(&b, " (%s)", e.Hint)
	}
	return b.String()
}

// Errors is every problem found in a set of mapping files, sorted by file, line and column.
type Errors struct {
	List []Error
}

// Error prints one problem per line.
func (e *Errors) Error() string {
	lines := make([]string, len(e.List))
	for i, err := range e.List {
		lines[i] = err.Error()
	}
	return strings.Join(lines, "\n")
}

func (e *Errors) sort() {
	slices.SortStableFunc(e.List, func(a, b Error) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
}
