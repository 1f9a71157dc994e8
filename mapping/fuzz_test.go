package mapping

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// FuzzParse: any bytes as a mapping file give a Set or errors that each say where and what; never
// a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(argumentsFile))
	f.Add([]byte("engines: {local: {alpha: {url: 'http://x'}}}\ntools: [{name: a, description: d, engine: local, work: {name: A}, inputSchema: {type: object}, input: '.x', result: '{y: .}', text: '.y', taskSupport: optional, protocolErrors: [E]}]\n"))
	f.Add([]byte("tools: &a [*a]\n"))
	f.Add([]byte("<<: *x\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		set, err := Parse("m.yaml", src)
		var errs *Errors
		switch {
		case err == nil && set == nil:
			t.Fatal("no Set and no error")
		case err != nil && !errors.As(err, &errs):
			t.Fatalf("an error that is not a list of positioned errors: %v", err)
		case err != nil:
			for _, e := range errs.List {
				if !strings.HasPrefix(e.Error(), "m.yaml:") {
					t.Fatalf("an error without its position: %q", e.Error())
				}
			}
		}
	})
}

// FuzzArguments: any arguments are accepted or refused with an error that names them.
func FuzzArguments(f *testing.F) {
	set, err := Parse("args.yaml", []byte(argumentsFile))
	if err != nil {
		f.Fatal(err)
	}
	tool, _ := set.Tool("args")
	for _, s := range []string{`{}`, `{"seconds":-1}`, `{"text":"abcdefg","tags":["a","a"]}`, `{"opts":{"deep":1,"x":2}}`, `[]`, `null`, `"x"`, `{"pair":["a","b"]}`, `{"has":[1]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		err := tool.ValidateArguments(json.RawMessage(args))
		if err != nil && strings.TrimSpace(err.Error()) == "" {
			t.Fatalf("%s: an empty error", args)
		}
	})
}

// FuzzTransforms: any jq program and input either yield one JSON value, or fail in words, within
// the transform timeout.
func FuzzTransforms(f *testing.F) {
	defer func(d time.Duration) { transformTimeout = d }(transformTimeout)
	transformTimeout = 50 * time.Millisecond
	for _, c := range [][2]string{{".", `{"a":1}`}, {"{a: .b}", `{"b":[1,2]}`}, {"[range(1e9)]", `null`}, {"def f: f; f", `1`}, {".[]", `[1,2]`}, {"error", `"x"`}, {`"\(.)"`, `12345678901234567890`}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, prog, input string) {
		tr, err := compileTransform(prog)
		if err != nil {
			return
		}
		start := time.Now()
		out, err := tr.run(json.RawMessage(input))
		if took := time.Since(start); took > time.Second {
			t.Fatalf("%q on %q took %s", prog, input, took)
		}
		if err == nil && !json.Valid(out) {
			t.Fatalf("%q on %q yielded %q, not JSON", prog, input, out)
		}
	})
}
