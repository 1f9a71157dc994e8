package mapping

// engines is an engines block that the bad tool files below use.
const engines = `engines:
  temporal: {temporal: {address: "127.0.0.1:7233"}}
  sfn: {stepfunctions: {region: us-east-1}}
`

// badFiles are mapping files with problems, each with the exact error text it must give.
var badFiles = []struct {
	name, src, want string
}{
	// The file as a whole.
	{
		name: "empty",
		src:  "",
		want: `m.yaml:1:1: the file is empty (declare engines:, tools: or both)`,
	},
	{
		name: "only comments",
		src: `# nothing here
`,
		want: `m.yaml:1:1: the file is empty (declare engines:, tools: or both)`,
	},
	{
		name: "syntax",
		src: `tools: [
`,
		want: `m.yaml:1:8: invalid YAML: sequence end token ']' not found (check the indentation and quoting)`,
	},
	{
		name: "bad indentation",
		src: `engines:
  a: 1
 b: 2
`,
		want: `m.yaml:3:2: invalid YAML: value is not allowed in this context (check the indentation and quoting)`,
	},
	{
		name: "not a mapping",
		src: `- name: x
`,
		want: `m.yaml:1:1: a mapping file must be a mapping of engines: and tools:, not a sequence (start with engines: or tools:)`,
	},
	{
		name: "two documents",
		src: `tools: []
---
tools: []
`,
		want: `m.yaml:3:1: a mapping file holds one YAML document, this is a second one (put each document in a file of its own)`,
	},
	{
		name: "version",
		src: `version: 2
`,
		want: `m.yaml:1:10: version: must be 1, not 2 (1 is the only version of the mapping format)`,
	},
	{
		name: "version string",
		src: `version: "1"
`,
		want: `m.yaml:1:10: version: must be 1, not "1" (1 is the only version of the mapping format)`,
	},
	{
		name: "unknown top-level key",
		src: `tool: []
`,
		want: `m.yaml:1:1: unknown key "tool" (did you mean "tools"?)`,
	},
	{
		name: "unknown key, no near match",
		src: `extras: 1
`,
		want: `m.yaml:1:1: unknown key "extras" (known keys: version, engines, tools)`,
	},
	{
		name: "duplicate top-level key",
		src: `engines: {}
engines: {}
`,
		want: `m.yaml:2:1: duplicate key "engines" (it is already set at line 1; keep one)`,
	},
	{
		name: "unsupported tag",
		src: `engines: !Ref x
`,
		want: `m.yaml:1:10: unsupported tag !Ref (remove the tag; mapping files use plain YAML values)
m.yaml:1:14: engines: must be a mapping, not a string`,
	},
	{
		name: "unknown alias",
		src: `engines:
  a: *nowhere
`,
		want: `m.yaml:2:6: unknown alias *nowhere (define the anchor &nowhere before this alias)`,
	},

	// Engines.
	{
		name: "engines not a mapping",
		src: `engines: [a]
`,
		want: `m.yaml:1:10: engines: must be a mapping, not a sequence`,
	},
	{
		name: "engine name",
		src: `engines:
  Local: {temporal: {address: "a:1"}}
`,
		want: `m.yaml:2:3: engines: "Local" is not a valid engine name (use lower-case letters, digits, "_" and "-", like local or aws-prod)`,
	},
	{
		name: "engine without kind",
		src: `engines:
  a: {}
`,
		want: `m.yaml:2:6: engines.a: needs temporal: or stepfunctions: (add temporal: {address: ...} or stepfunctions: {region: ...})`,
	},
	{
		name: "engine with both kinds",
		src: `engines:
  a:
    temporal: {address: "a:1"}
    stepfunctions: {region: us-east-1}
`,
		want: `m.yaml:4:5: engines.a: has both temporal: and stepfunctions: (an engine block connects to one engine: give each its own engine name)`,
	},
	{
		name: "engine empty",
		src: `engines:
  a:
`,
		want: `m.yaml:2:6: engines.a: must be a mapping, not empty`,
	},
	{
		name: "unknown engine key",
		src: `engines:
  a:
    temporal: {address: "a:1", namspace: x}
`,
		want: `m.yaml:3:32: engines.a.temporal: unknown key "namspace" (did you mean "namespace"?)`,
	},
	{
		name: "missing address",
		src: `engines:
  a:
    temporal: {namespace: x}
`,
		want: `m.yaml:3:15: engines.a.temporal: missing required key "address" (the Temporal frontend as host:port, like 127.0.0.1:7233)`,
	},
	{
		name: "bad address",
		src: `engines:
  a:
    temporal: {address: localhost}
`,
		want: `m.yaml:3:25: engines.a.temporal.address: "localhost" is not host:port (the Temporal frontend as host:port, like 127.0.0.1:7233)`,
	},
	{
		name: "address not a string",
		src: `engines:
  a:
    temporal: {address: 7233}
`,
		want: `m.yaml:3:25: engines.a.temporal.address: must be a string, not an integer (quote it: "7233")`,
	},
	{
		name: "tls without value",
		src: `engines:
  a:
    temporal:
      address: "a:1"
      tls:
`,
		want: `m.yaml:5:12: engines.a.temporal.tls: has no value (write tls: {} for TLS with the system's root certificates)`,
	},
	{
		name: "tls cert without key",
		src: `engines:
  a:
    temporal: {address: "a:1", tls: {certFile: c.pem}}
`,
		want: `m.yaml:3:37: engines.a.temporal.tls: certFile and keyFile go together (set both for mutual TLS, or neither)`,
	},
	{
		name: "api key instead of its name",
		src: `engines:
  a:
    temporal: {address: "a:1", apiKeyEnv: "sk-live.abc123"}
`,
		want: `m.yaml:3:43: engines.a.temporal.apiKeyEnv: must be the name of an environment variable (like TEMPORAL_API_KEY; the key itself never goes in a mapping file)`,
	},
	{
		name: "missing region",
		src: `engines:
  a:
    stepfunctions: {endpoint: "http://127.0.0.1:8083"}
`,
		want: `m.yaml:3:20: engines.a.stepfunctions: missing required key "region" (the AWS region of the state machines, like us-east-1)`,
	},
	{
		name: "bad region",
		src: `engines:
  a:
    stepfunctions: {region: useast1}
`,
		want: `m.yaml:3:29: engines.a.stepfunctions.region: "useast1" is not an AWS region (the AWS region of the state machines, like us-east-1)`,
	},
	{
		name: "bad endpoint",
		src: `engines:
  a:
    stepfunctions: {region: us-east-1, endpoint: "127.0.0.1:8083"}
`,
		want: `m.yaml:3:50: engines.a.stepfunctions.endpoint: "127.0.0.1:8083" is not an http:// or https:// URL (like http://127.0.0.1:8083; leave it out to use AWS)`,
	},
	{
		name: "bad role ARN",
		src: `engines:
  a:
    stepfunctions: {region: us-east-1, roleArn: "arn:aws:iam::123:user/x"}
`,
		want: `m.yaml:3:49: engines.a.stepfunctions.roleArn: "arn:aws:iam::123:user/x" is not an IAM role ARN (like arn:aws:iam::123456789012:role/NAME)`,
	},

	// Environment references.
	{
		name: "env unset",
		src: `engines:
  a:
    temporal:
      address: ${TASKGATE_TEST_UNSET}
`,
		want: `m.yaml:4:16: engines.a.temporal.address: environment variable TASKGATE_TEST_UNSET is not set (set it, or give a default: ${TASKGATE_TEST_UNSET:-VALUE})`,
	},
	{
		name: "env bad name",
		src: `engines:
  a:
    temporal:
      address: ${1X}
`,
		want: `m.yaml:4:16: engines.a.temporal.address: "1X" is not a valid environment variable name (write ${VAR} or ${VAR:-default} for an environment variable, $$ for a literal $)`,
	},
	{
		name: "env unterminated",
		src: `engines:
  a:
    temporal:
      address: ${X
`,
		want: `m.yaml:4:16: engines.a.temporal.address: "${X" has no closing } (write ${VAR} or ${VAR:-default} for an environment variable, $$ for a literal $)`,
	},
	{
		name: "env lone dollar",
		src: `engines:
  a:
    temporal:
      address: a$b:1
`,
		want: `m.yaml:4:16: engines.a.temporal.address: a "$" that starts no ${VAR} (write ${VAR} or ${VAR:-default} for an environment variable, $$ for a literal $)`,
	},
	{
		name: "env in a workflow",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow:
      type: ${TASKGATE_TEST_UNSET}
      taskQueue: q
    inputSchema: {type: object}
`,
		want: `m.yaml:9:13: tools[0].workflow.type: environment variable TASKGATE_TEST_UNSET is not set (set it, or give a default: ${TASKGATE_TEST_UNSET:-VALUE})`,
	},

	// Tools.
	{
		name: "tools not a list",
		src: `tools: {name: a}
`,
		want: `m.yaml:1:8: tools: must be a sequence, not a mapping (list them: tools: [{name: ..., ...}] or one "- name: ..." per tool)`,
	},
	{
		name: "tool not a mapping",
		src: `tools:
  - a
`,
		want: `m.yaml:2:5: tools[0]: must be a mapping, not a string`,
	},
	{
		name: "tool missing everything",
		src: `tools:
  - title: T
`,
		want: `m.yaml:2:5: tools[0]: missing required key "name" (use 1 to 64 letters, digits, "_", "-" and ".")
m.yaml:2:5: tools[0]: missing required key "description" (say what the tool does: MCP clients show it to the model)
m.yaml:2:5: tools[0]: missing required key "engine" (the name of an engine under engines:)
m.yaml:2:5: tools[0]: missing required key "inputSchema" (a JSON Schema of the arguments, at least {type: object})`,
	},
	{
		name: "unknown tool key",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    inputSchema: {type: object}
    poll_interval: 1s
`,
		want: `m.yaml:10:5: tools[0]: unknown key "poll_interval" (did you mean "pollInterval"?)`,
	},
	{
		name: "duplicate tool key",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    inputSchema: {type: object}
    name: b
`,
		want: `m.yaml:10:5: tools[0]: duplicate key "name" (it is already set at line 5; keep one)`,
	},
	{
		name: "bad tool name",
		src: engines + `tools:
  - name: wait and echo
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    inputSchema: {type: object}
`,
		want: `m.yaml:5:11: tools[0].name: "wait and echo" is not a valid tool name (use 1 to 64 letters, digits, "_", "-" and ".")`,
	},
	{
		name: "tool name too long",
		src: engines + `tools:
  - name: a123456789b123456789c123456789d123456789e123456789f123456789g12345
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    inputSchema: {type: object}
`,
		want: `m.yaml:5:11: tools[0].name: "a123456789b123456789c123456789d123456789e123456789f123456789g12345" is not a valid tool name (use 1 to 64 letters, digits, "_", "-" and ".")`,
	},
	{
		name: "empty description",
		src: engines + `tools:
  - name: a
    description: "  "
    engine: temporal
    workflow: {type: A, taskQueue: q}
    inputSchema: {type: object}
`,
		want: `m.yaml:6:18: tools[0].description: is empty (say what the tool does: MCP clients show it to the model)`,
	},
	{
		name: "title without value",
		src: engines + `tools:
  - name: a
    title:
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    inputSchema: {type: object}
`,
		want: `m.yaml:6:11: tools[0].title: has no value (give it a value or remove the key)`,
	},
	{
		name: "duplicate tool name",
		src: engines + `tools:
  - {name: a, description: d, engine: temporal, workflow: {type: A, taskQueue: q}, inputSchema: {type: object}}
  - {name: a, description: d, engine: temporal, workflow: {type: A, taskQueue: q}, inputSchema: {type: object}}
`,
		want: `m.yaml:6:12: tools[1].name: tool "a" is already defined at m.yaml:5:12 (tool names must be unique across all mapping files)`,
	},
	{
		name: "unknown engine",
		src: engines + `tools:
  - {name: a, description: d, engine: temporl, workflow: {type: A, taskQueue: q}, inputSchema: {type: object}}
`,
		want: `m.yaml:5:39: tools[0].engine: no engine named "temporl" (did you mean "temporal"? known engines: sfn, temporal)`,
	},
	{
		name: "unknown engine, no near match",
		src: engines + `tools:
  - {name: a, description: d, engine: prod, workflow: {type: A, taskQueue: q}, inputSchema: {type: object}}
`,
		want: `m.yaml:5:39: tools[0].engine: no engine named "prod" (known engines: sfn, temporal)`,
	},
	{
		name: "no engines at all",
		src: `tools:
  - {name: a, description: d, engine: prod, workflow: {type: A, taskQueue: q}, inputSchema: {type: object}}
`,
		want: `m.yaml:2:39: tools[0].engine: no engine named "prod" (no engines are defined: add one under engines:)`,
	},
	{
		name: "workflow on Step Functions",
		src: engines + `tools:
  - name: a
    description: d
    engine: sfn
    workflow: {type: A, taskQueue: q}
    inputSchema: {type: object}
`,
		want: `m.yaml:5:5: tools[0]: missing required key "stateMachine": engine "sfn" is Step Functions (like arn:aws:states:us-east-1:123456789012:stateMachine:NAME, or with :ALIAS or :VERSION after it)
m.yaml:8:5: tools[0].workflow: engine "sfn" is Step Functions, not Temporal (use stateMachine: with the state machine ARN for a Step Functions engine)`,
	},
	{
		name: "stateMachine on Temporal",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    stateMachine: arn:aws:states:us-east-1:123456789012:stateMachine:a
    inputSchema: {type: object}
`,
		want: `m.yaml:5:5: tools[0]: missing required key "workflow": engine "temporal" is Temporal (add workflow: {type: ..., taskQueue: ...})
m.yaml:8:5: tools[0].stateMachine: engine "temporal" is Temporal, not Step Functions (use workflow: {type: ..., taskQueue: ...} for a Temporal engine)`,
	},
	{
		name: "workflow missing keys",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow: {typ: A}
    inputSchema: {type: object}
`,
		want: `m.yaml:8:15: tools[0].workflow: missing required key "type" (the workflow type to start, as its workers register it)
m.yaml:8:15: tools[0].workflow: missing required key "taskQueue" (the task queue that the workflow's workers poll)
m.yaml:8:16: tools[0].workflow: unknown key "typ" (did you mean "type"?)`,
	},
	{
		name: "bad state machine ARN",
		src: engines + `tools:
  - name: a
    description: d
    engine: sfn
    stateMachine: arn:aws:states:us-east-1:123456789012:execution:a:b
    inputSchema: {type: object}
`,
		want: `m.yaml:8:19: tools[0].stateMachine: "arn:aws:states:us-east-1:123456789012:execution:a:b" is not a state machine ARN (like arn:aws:states:us-east-1:123456789012:stateMachine:NAME, or with :ALIAS or :VERSION after it)`,
	},
	{
		name: "bad taskSupport",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    taskSupport: later
    inputSchema: {type: object}
`,
		want: `m.yaml:9:18: tools[0].taskSupport: "later" is not required, optional or forbidden (required answers at once with a task; optional runs as a task for clients that take one and waits for the others; forbidden always waits up to timeout)`,
	},
	{
		name: "the invocation key of earlier versions",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    invocation: sync
    inputSchema: {type: object}
`,
		want: `m.yaml:9:5: tools[0]: unknown key "invocation" (invocation was replaced by taskSupport: async is taskSupport: required, sync is taskSupport: forbidden)`,
	},
	{
		name: "bad protocolErrors and text",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    protocolErrors: [Crash, "", 3]
    text: "(.name"
    inputSchema: {type: object}
`,
		want: `m.yaml:9:29: tools[0].protocolErrors[1]: is empty (the failure types that are protocol errors, like [Internal.Crash, States.Runtime])
m.yaml:9:33: tools[0].protocolErrors[2]: must be a string, not an integer (quote it: "3")
m.yaml:10:11: tools[0].text: invalid jq program: unexpected EOF (see https://jqlang.org/manual/)`,
	},
	{
		name: "protocolErrors not a list",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    protocolErrors: Crash
    inputSchema: {type: object}
`,
		want: `m.yaml:9:21: tools[0].protocolErrors: must be a list of strings, not a string (the failure types that are protocol errors, like [Internal.Crash, States.Runtime])`,
	},
	{
		name: "bad durations",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q, executionTimeout: 1d}
    timeout: 60
    pollInterval: 50ms
    ttl: forever
    inputSchema: {type: object}
  - name: b
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    timeout: 0s
    ttl: -1h
    inputSchema: {type: object}
`,
		want: `m.yaml:8:57: tools[0].workflow.executionTimeout: "1d" is not a duration (use a Go duration like 30s, 5m, 24h)
m.yaml:9:14: tools[0].timeout: "60" is not a duration (use a Go duration like 30s, 5m, 24h)
m.yaml:10:19: tools[0].pollInterval: must be at least 100ms, not 50ms (use a Go duration like 30s, 5m, 24h)
m.yaml:11:10: tools[0].ttl: "forever" is not a duration (use a Go duration like 30s, 5m, 24h, or unlimited)
m.yaml:17:14: tools[1].timeout: must be positive, not 0s (use a Go duration like 30s, 5m, 24h)
m.yaml:18:10: tools[1].ttl: must be positive, not -1h (use a Go duration like 30s, 5m, 24h, or unlimited)`,
	},

	// Schemas.
	{
		name: "inputSchema not a mapping",
		src: engines + `tools:
  - {name: a, description: d, engine: temporal, workflow: {type: A, taskQueue: q}, inputSchema: object}
`,
		want: `m.yaml:5:97: tools[0].inputSchema: must be a mapping, not a string (write a JSON Schema like {type: object, properties: {...}})`,
	},
	{
		name: "inputSchema without type",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    inputSchema:
      properties: {a: {type: string}}
`,
		want: `m.yaml:9:5: tools[0].inputSchema: needs type: object (tool arguments and structured results are JSON objects)`,
	},
	{
		name: "inputSchema of an array",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    inputSchema: {type: array}
`,
		want: `m.yaml:9:25: tools[0].inputSchema.type: must be object (tool arguments and structured results are JSON objects)`,
	},
	{
		name: "schema keyword problems",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    inputSchema:
      type: object
      requried: [a]
      properties:
        a: {type: strng}
        b: {type: string, minLength: -1, pattern: "(?=x)"}
        c: {type: number, minimum: zero}
        d: {type: [string, nul]}
        e: {type: boolean, deprecated: maybe}
        f: 3
      required: a
`,
		want: "m.yaml:11:7: tools[0].inputSchema: unknown JSON Schema keyword \"requried\" (did you mean \"required\"?)\nm.yaml:13:19: tools[0].inputSchema.properties.a.type: \"strng\" is not a JSON type (did you mean \"string\"?)\nm.yaml:14:38: tools[0].inputSchema.properties.b.minLength: must be a non-negative integer, not -1\nm.yaml:14:51: tools[0].inputSchema.properties.b.pattern: \"(?=x)\" is not a regular expression taskgate can run: error parsing regexp: invalid or unsupported Perl syntax: `(?=` (taskgate uses Go's RE2 syntax: no lookaround or backreferences)\nm.yaml:15:36: tools[0].inputSchema.properties.c.minimum: must be a number, not a string\nm.yaml:16:28: tools[0].inputSchema.properties.d.type[1]: \"nul\" is not a JSON type (did you mean \"null\"?)\nm.yaml:17:40: tools[0].inputSchema.properties.e.deprecated: must be true or false, not a string\nm.yaml:18:12: tools[0].inputSchema.properties.f: must be a JSON Schema, not an integer (a schema is a mapping, or true or false)\nm.yaml:19:17: tools[0].inputSchema.required: must be a list, not a string",
	},
	{
		name: "schema ref to nothing",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    inputSchema:
      type: object
      properties:
        a: {$ref: "#/$defs/missing"}
`,
		want: `m.yaml:9:5: tools[0].inputSchema: invalid JSON Schema: JSON Pointer "/$defs/missing": no key "missing" in map (see https://json-schema.org/understanding-json-schema)`,
	},
	{
		name: "schema default of the wrong type",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    inputSchema:
      type: object
      properties:
        n: {type: integer, default: ten}
`,
		want: `m.yaml:9:5: tools[0].inputSchema: a default value does not fit its schema: validating /properties/n: type: ten has type "string", want "integer" (see https://json-schema.org/understanding-json-schema)`,
	},
	{
		name: "schema version",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    inputSchema:
      $schema: http://json-schema.org/draft-04/schema#
      type: object
`,
		want: `m.yaml:10:16: tools[0].inputSchema.$schema: taskgate validates draft 2020-12 and draft-07 schemas, not "http://json-schema.org/draft-04/schema#" (use https://json-schema.org/draft/2020-12/schema, or leave $schema out)`,
	},
	{
		name: "schema duplicate keyword",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    inputSchema:
      type: object
      properties: {a: {type: string}}
      properties: {b: {type: string}}
`,
		want: `m.yaml:12:7: tools[0].inputSchema: duplicate key "properties" (it is already set at line 11; keep one)`,
	},
	{
		name: "outputSchema",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    inputSchema: {type: object}
    outputSchema: {type: string}
`,
		want: `m.yaml:10:26: tools[0].outputSchema.type: must be object (tool arguments and structured results are JSON objects)`,
	},
	{
		name: "schema value not JSON",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    inputSchema:
      type: object
      properties:
        a: {type: number, maximum: .inf}
`,
		want: `m.yaml:12:36: tools[0].inputSchema.properties.a.maximum: .inf is not a JSON number`,
	},

	// Transforms.
	{
		name: "jq syntax",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    inputSchema: {type: object}
    input: '{seconds text}'
`,
		want: `m.yaml:10:12: tools[0].input: invalid jq program: unexpected token "text" (see https://jqlang.org/manual/)`,
	},
	{
		name: "jq unknown function",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    inputSchema: {type: object}
    result: 'summarize(.)'
`,
		want: `m.yaml:10:13: tools[0].result: invalid jq program: function not defined: summarize/1 (see https://jqlang.org/manual/)`,
	},
	{
		name: "jq empty",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    inputSchema: {type: object}
    input: ''
`,
		want: `m.yaml:10:12: tools[0].input: is empty (write a jq program like {seconds, text}, or remove the key)`,
	},
	{
		name: "jq not a string",
		src: engines + `tools:
  - name: a
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    inputSchema: {type: object}
    input: {seconds: 1}
`,
		want: `m.yaml:10:12: tools[0].input: must be a string, not a mapping`,
	},

	// YAML features that share values still point at the problem.
	{
		name: "merge key",
		src: engines + `tools:
  - &base
    name: a
    description: d
    engine: temporal
    workflow: {type: A, taskQueue: q}
    inputSchema: {type: object}
  - <<: *base
    name: b
    pollInterval: 1ms
  - <<: *base
`,
		want: `m.yaml:13:19: tools[1].pollInterval: must be at least 100ms, not 1ms (use a Go duration like 30s, 5m, 24h)
m.yaml:14:5: tools[2].name: tool "a" is already defined at m.yaml:6:11 (tool names must be unique across all mapping files)`,
	},
}
