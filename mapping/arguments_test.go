package mapping

import (
	"errors"
	"testing"
)

const argumentsFile = `
engines:
  local: {alpha: {url: "http://x"}}
tools:
  - name: args
    description: Takes every kind of argument.
    engine: local
    work: {name: A}
    inputSchema:
      type: object
      properties:
        seconds: {type: number, minimum: 0, maximum: 86400}
        text: {type: string, minLength: 1, maxLength: 5, pattern: '^\w+$'}
        mode: {enum: [fast, slow, 3]}
        kind: {const: x}
        n: {type: integer, multipleOf: 2, exclusiveMinimum: 0, exclusiveMaximum: 10}
        tags: {type: array, items: {type: string}, minItems: 1, maxItems: 2, uniqueItems: true}
        opts:
          type: object
          properties:
            deep: {type: boolean}
            p: {$ref: '#/$defs/point'}
          required: [deep]
          additionalProperties: false
        pair: {type: array, prefixItems: [{type: string}, {type: number}]}
        either: {anyOf: [{type: string}, {type: number}]}
        one: {oneOf: [{type: number}, {type: integer}]}
        multi: {type: [string, "null"]}
        other: {not: {type: string}}
        has: {type: array, contains: {type: integer}, minContains: 2}
        some: {type: array, contains: {type: integer}}
        few: {type: array, contains: {type: integer}, maxContains: 1}
        never: false
        names: {type: object, propertyNames: {pattern: '^[a-z]+$'}}
        a: {type: string}
        b: {type: string}
        m: {type: object, additionalProperties: {type: integer}, minProperties: 1, maxProperties: 2}
      required: [text]
      dependentRequired: {a: [b]}
      additionalProperties: false
      $defs:
        point: {type: object, properties: {x: {type: number}}, required: [x, y]}
  - name: draft7
    description: Takes a draft-07 schema.
    engine: local
    work: {name: A}
    inputSchema:
      $schema: http://json-schema.org/draft-07/schema#
      type: object
      properties:
        pair: {type: array, items: [{type: string}], additionalItems: false}
      dependencies: {a: [b, c]}
  - name: no_args
    description: Takes nothing.
    engine: local
    work: {name: A}
    inputSchema: {type: object, properties: {}, additionalProperties: false}
`

func TestValidateArguments(t *testing.T) {
	set, err := Parse("args.yaml", []byte(argumentsFile))
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := set.Tool("args")
	for _, c := range []struct{ args, want, argument string }{
		{`{"text":"a"}`, "", ""},
		{`{"text":"a","seconds":5,"mode":3,"tags":["x"],"opts":{"deep":true,"p":{"x":1,"y":2}},"a":"x","b":"y","multi":null}`, "", ""},
		{``, `argument "text" is required`, "text"},
		{`null`, `argument "text" is required`, "text"},
		{`{}`, `argument "text" is required`, "text"},
		{`[]`, `arguments must be a JSON object, not an array`, ""},
		{`"text"`, `arguments must be a JSON object, not a string`, ""},
		{`{`, `arguments are not valid JSON: unexpected end of JSON input`, ""},
		{`{"seconds":"x","text":"a"}`, `argument "seconds": has type string, want number`, "seconds"},
		{`{"text":"abcdefg"}`, `argument "text": must be at most 5 characters long`, "text"},
		{`{"text":""}`, `argument "text": must be at least 1 character long`, "text"},
		{`{"text":"a b"}`, `argument "text": must match the pattern ^\w+$`, "text"},
		{`{"text":"a","seconds":-1}`, `argument "seconds": must be at least 0`, "seconds"},
		{`{"text":"a","seconds":1e9}`, `argument "seconds": must be at most 86400`, "seconds"},
		{`{"text":"a","mode":"x"}`, `argument "mode": must be one of "fast", "slow", 3`, "mode"},
		{`{"text":"a","kind":"y"}`, `argument "kind": must be "x"`, "kind"},
		{`{"text":"a","n":3}`, `argument "n": must be a multiple of 2`, "n"},
		{`{"text":"a","n":0}`, `argument "n": must be greater than 0`, "n"},
		{`{"text":"a","n":10}`, `argument "n": must be less than 10`, "n"},
		{`{"text":"a","n":1.5}`, `argument "n": has type number, want integer`, "n"},
		{`{"text":"a","tags":[]}`, `argument "tags": must have at least 1 item`, "tags"},
		{`{"text":"a","tags":["a","b","c"]}`, `argument "tags": must have at most 2 items`, "tags"},
		{`{"text":"a","tags":["a","a"]}`, `argument "tags": must not repeat items (items 0 and 1 are the same)`, "tags"},
		{`{"text":"a","tags":["a",1]}`, `argument "tags[1]": has type integer, want string`, "tags[1]"},
		{`{"text":"a","tags":["a",1.5]}`, `argument "tags[1]": has type number, want string`, "tags[1]"},
		{`{"text":"a","opts":{}}`, `argument "opts.deep" is required`, "opts.deep"},
		{`{"text":"a","opts":{"deep":true,"z":1,"y":2}}`, `arguments "opts.y", "opts.z" are not allowed (known: deep, p)`, "opts"},
		{`{"text":"a","opts":{"deep":true,"p":{"x":"1","y":2}}}`, `argument "opts.p.x": has type string, want number`, "opts.p.x"},
		{`{"text":"a","opts":{"deep":true,"p":{"x":1}}}`, `argument "opts.p.y" is required`, "opts.p.y"},
		{`{"text":"a","pair":[1]}`, `argument "pair[0]": has type integer, want string`, "pair[0]"},
		{`{"text":"a","either":true}`, `argument "either": matches none of the allowed forms`, "either"},
		{`{"text":"a","one":1}`, `argument "one": matches more than one of the allowed forms, want exactly one`, "one"},
		{`{"text":"a","multi":1}`, `argument "multi": has type integer, want one of null, string`, "multi"},
		{`{"text":"a","a":"x"}`, `argument "b" is required when "a" is given`, "b"},
		{`{"text":"a","zz":1}`, `argument "zz" is not allowed (known: a, b, either, few, has, kind, m, mode, multi, n, names, never, one, opts, other, pair, seconds, some, tags, text)`, "zz"},
		{`{"text":"a","m":{}}`, `argument "m": must have at least 1 property`, "m"},
		{`{"text":"a","m":{"a":1,"b":2,"c":3}}`, `argument "m": must have at most 2 properties`, "m"},
		{`{"text":"a","m":{"k":"v"}}`, `argument "m.k": has type string, want integer`, "m.k"},
		{`{"text":"a","m":{"a.b":"v"}}`, `argument "m[\"a.b\"]": has type string, want integer`, `m["a.b"]`},
		{`{"text":"a","other":"x"}`, `argument "other": matches a form that is not allowed`, "other"},
		{`{"text":"a","some":["x"]}`, `argument "some": has no item of the required form`, "some"},
		{`{"text":"a","has":["x",1]}`, `argument "has": must have at least 2 items of the required form, not 1`, "has"},
		{`{"text":"a","few":[1,2]}`, `argument "few": must have at most 1 item of the required form, not 2`, "few"},
		{`{"text":"a","never":1}`, `argument "never" is not allowed`, "never"},
		{`{"text":"a","names":{"Bad":1}}`, `argument "names": the name "Bad" is not allowed`, "names"},
	} {
		err := tool.ValidateArguments([]byte(c.args))
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.args, err)
			}
			continue
		}
		var ae *ArgumentError
		if !errors.As(err, &ae) {
			t.Errorf("%s: got %v (%T), want an *ArgumentError", c.args, err, err)
			continue
		}
		if ae.Msg != c.want || ae.Argument != c.argument {
			t.Errorf("%s:\ngot  %q (argument %q)\nwant %q (argument %q)", c.args, ae.Msg, ae.Argument, c.want, c.argument)
		}
	}

	draft7, _ := set.Tool("draft7")
	for args, want := range map[string]string{
		`{"pair":["a",1]}`: `argument "pair": has 1 item more than allowed`,
		`{"a":1}`:          `arguments "b", "c" are required when "a" is given`,
	} {
		if got := errString(draft7.ValidateArguments([]byte(args))); got != want {
			t.Errorf("draft7 %s: got %q, want %q", args, got, want)
		}
	}

	none, _ := set.Tool("no_args")
	for args, want := range map[string]string{
		``:         "",
		`{}`:       "",
		`{"x": 1}`: `argument "x" is not allowed`,
	} {
		err := none.ValidateArguments([]byte(args))
		if got := errString(err); got != want {
			t.Errorf("no_args %s: got %q, want %q", args, got, want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
