package mapping

// engines is an engines block that the bad tool files below use.
const engines = `engines:
  local: {alpha: {url: "http://x"}}
  remote: {beta: {}}
`

// badFiles are mapping files with problems, each with the exact error text it must give.
var badFiles = []struct {
	name, src, want string
}{
	// auth: and allow:.
	{
		name: "auth without a way in",
		src:  "auth: {origins: [\"https://console.example\"]}\n",
		want: `m.yaml:1:7: auth: needs oauth:, apiKeys: or both (add oauth: {issuer: ..., audience: ..., jwksUrl: ...}, apiKeys: [{principal: ..., keyEnv: ...}], or both)`,
	},
	{
		name: "bad oauth",
		src: `auth:
  oauth:
    issuer: http://auth.example
    jwksUrl: https://auth.example/jwks.json
    keyFiles: [k.pem]
    clockSkew: soon
`,
		want: `m.yaml:3:5: auth.oauth: missing required key "audience" (the resource identifier tokens must be for: this server's MCP URL, like https://mcp.example.com/mcp)
m.yaml:3:5: auth.oauth: needs exactly one of jwksUrl and keyFiles (name the issuer's keys one way: jwksUrl: https://.../jwks.json, or keyFiles: [issuer.pem])
m.yaml:3:13: auth.oauth.issuer: "http://auth.example" is not an https URL (an https URL, like https://auth.example.com (http only for localhost))
m.yaml:6:16: auth.oauth.clockSkew: "soon" is not a duration (use a Go duration like 30s, 5m, 24h)`,
	},
	{
		name: "bad api keys and origins",
		src: `auth:
  apiKeys:
    - {principal: ci-bot, keyEnv: TASKGATE_KEY_CI}
    - {principal: ci-bot, keyEnv: OTHER}
    - {principal: "a b", keyEnv: 1KEY, key: sk-live-123}
  origins: [console.example]
`,
		want: `m.yaml:4:19: auth.apiKeys[1].principal: principal "ci-bot" has a key already (one key per principal: rotate a key by changing the variable it names)
m.yaml:5:19: auth.apiKeys[2].principal: "a b" is not a valid principal (1 to 128 letters, digits and ._@/-, like ci-bot; no ':', which only OAuth principals (oauth:SUBJECT) have)
m.yaml:5:34: auth.apiKeys[2].keyEnv: "1KEY" is not an environment variable name (letters, digits and _, not starting with a digit)
m.yaml:5:40: auth.apiKeys[2]: unknown key "key" (known keys: keyEnv, principal, scopes)
m.yaml:6:13: auth.origins[0]: "console.example" is not an origin (an origin is scheme://host[:port], like https://console.example.com)`,
	},
	{
		name: "principals that could be taken for another kind",
		src: engines + `  gated: {alpha: {url: "http://x"}, allow: {principals: [ci-bot, "oauth:alice", "oauth:", "a:b", local]}}
auth:
  apiKeys:
    - {principal: "oauth:alice", keyEnv: K1}
    - {principal: local, keyEnv: K2}
    - {principal: ci-bot, keyEnv: K3}
`,
		want: `m.yaml:4:81: engines.gated.allow.principals[2]: "oauth:" is not a principal (an API key's principal, like ci-bot, or an OAuth token's subject after oauth:, like oauth:alice)
m.yaml:4:91: engines.gated.allow.principals[3]: "a:b" is not a principal (an API key's principal, like ci-bot, or an OAuth token's subject after oauth:, like oauth:alice)
m.yaml:4:98: engines.gated.allow.principals[4]: "local" is not a principal (an API key's principal, like ci-bot, or an OAuth token's subject after oauth:, like oauth:alice)
m.yaml:7:19: auth.apiKeys[0].principal: "oauth:alice" is not a valid principal (1 to 128 letters, digits and ._@/-, like ci-bot; no ':', which only OAuth principals (oauth:SUBJECT) have)
m.yaml:8:19: auth.apiKeys[1].principal: "local" is reserved (local is the user who started taskgate (stdio, or HTTP without auth:), who may use every tool; give the key another name)`,
	},
	{
		name: "bad allow",
		src: engines + `  gated: {alpha: {url: "http://x"}, allow: {}}
tools:
  - {name: a, description: d, engine: local, work: {name: A}, inputSchema: {type: object}, allow: {scopes: deploy}}
`,
		want: `m.yaml:4:44: engines.gated.allow: names no scope and no principal (allow: {scopes: [deploy]} or allow: {principals: [alice]})
m.yaml:6:99: tools[0].allow: names no scope and no principal (allow: {scopes: [deploy]} or allow: {principals: [alice]})
m.yaml:6:108: tools[0].allow.scopes: must be a list of strings, not a string (the scopes a caller needs, like [deploy])`,
	},
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
		want: `m.yaml:1:1: unknown key "extras" (known keys: auth, engines, tools, version)`,
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
  Local: {alpha: {url: "http://x"}}
`,
		want: `m.yaml:2:3: engines: "Local" is not a valid engine name (use lower-case letters, digits, "_" and "-", like local or aws-prod)`,
	},
	{
		name: "engine without kind",
		src: `engines:
  a: {}
`,
		want: `m.yaml:2:6: engines.a: needs alpha:, beta: or memory: (add alpha: {url: http://x}, beta: {} or memory: {})`,
	},
	{
		name: "engine with both kinds",
		src: `engines:
  a:
    beta: {}
    alpha: {url: "http://x"}
`,
		want: `m.yaml:4:5: engines.a: has both beta: and alpha: (an engine block connects to one engine: give each its own engine name)`,
	},
	{
		name: "engine of an unknown kind",
		src: `engines:
  a:
    alfa: {url: "http://x"}
`,
		// One mistake, one error: the unknown key, with what it meant.
		want: `m.yaml:3:5: engines.a: unknown key "alfa" (did you mean "alpha"?)`,
	},
	{
		name: "engine empty",
		src: `engines:
  a:
`,
		want: `m.yaml:2:6: engines.a: must be a mapping, not empty`,
	},
	{
		name: "engine kind not a mapping",
		src: `engines:
  a: {alpha: http://x}
`,
		want: `m.yaml:2:14: engines.a.alpha: must be a mapping, not a string (add alpha: {url: http://x})`,
	},
	{
		name: "unknown key in an engine block",
		src: `engines:
  a:
    alpha: {url: "http://x", urls: y}
`,
		want: `m.yaml:3:30: engines.a.alpha: unknown key "urls" (did you mean "url"?)`,
	},
	{
		name: "missing key in an engine block",
		src: `engines:
  a:
    alpha: {wait: 1s}
`,
		want: `m.yaml:3:12: engines.a.alpha: missing required key "url" (the alpha server, like http://x)`,
	},
	{
		name: "a driver's check of a value",
		src: `engines:
  a:
    alpha: {url: ftp://x}
`,
		want: `m.yaml:3:18: engines.a.alpha.url: "ftp://x" is not an http:// URL (like http://x)`,
	},
	{
		name: "engine value not a string",
		src: `engines:
  a:
    alpha: {url: 7233}
`,
		want: `m.yaml:3:18: engines.a.alpha.url: must be a string, not an integer (quote it: "7233")`,
	},
	{
		name: "engine duration",
		src: `engines:
  a:
    alpha: {url: "http://x", wait: 1d}
`,
		want: `m.yaml:3:36: engines.a.alpha.wait: "1d" is not a duration (use a Go duration like 30s, 5m, 24h)`,
	},
	{
		name: "engine boolean",
		src: `engines:
  a:
    alpha: {url: "http://x", strict: "yes"}
`,
		want: `m.yaml:3:38: engines.a.alpha.strict: must be true or false, not a string`,
	},
	{
		name: "nested block without value",
		src: `engines:
  a:
    alpha:
      url: "http://x"
      limits:
`,
		want: `m.yaml:5:15: engines.a.alpha.limits: has no value (write limits: {} for the defaults)`,
	},
	{
		name: "nested block of the wrong kind",
		src: `engines:
  a:
    alpha: {url: "http://x", limits: [1]}
`,
		want: `m.yaml:3:38: engines.a.alpha.limits: must be a mapping, not a sequence (write limits: {} for the defaults)`,
	},
	{
		name: "a driver's check of a nested block",
		src: `engines:
  a:
    alpha: {url: "http://x", limits: {}}
`,
		want: `m.yaml:3:38: engines.a.alpha.limits: sets no limit (add max: N)`,
	},
	{
		name: "unknown key in a nested block",
		src: `engines:
  a:
    alpha: {url: "http://x", limits: {max: "1", mx: "0"}}
`,
		want: `m.yaml:3:49: engines.a.alpha.limits: unknown key "mx" (did you mean "max"?)`,
	},

	// Environment references.
	{
		name: "env unset",
		src: `engines:
  a:
    alpha:
      url: ${TASKGATE_TEST_UNSET}
`,
		want: `m.yaml:4:12: engines.a.alpha.url: environment variable TASKGATE_TEST_UNSET is not set (set it, or give a default: ${TASKGATE_TEST_UNSET:-VALUE})`,
	},
	{
		name: "env bad name",
		src: `engines:
  a:
    alpha:
      url: ${1X}
`,
		want: `m.yaml:4:12: engines.a.alpha.url: "1X" is not a valid environment variable name (write ${VAR} or ${VAR:-default} for an environment variable, $$ for a literal $)`,
	},
	{
		name: "env unterminated",
		src: `engines:
  a:
    alpha:
      url: ${X
`,
		want: `m.yaml:4:12: engines.a.alpha.url: "${X" has no closing } (write ${VAR} or ${VAR:-default} for an environment variable, $$ for a literal $)`,
	},
	{
		name: "env lone dollar",
		src: `engines:
  a:
    alpha:
      url: http://a$b
`,
		want: `m.yaml:4:12: engines.a.alpha.url: a "$" that starts no ${VAR} (write ${VAR} or ${VAR:-default} for an environment variable, $$ for a literal $)`,
	},
	{
		name: "env in a duration",
		src: `engines:
  a:
    alpha: {url: "http://x", wait: "${TASKGATE_TEST_UNSET}"}
`,
		want: `m.yaml:3:36: engines.a.alpha.wait: environment variable TASKGATE_TEST_UNSET is not set (set it, or give a default: ${TASKGATE_TEST_UNSET:-VALUE})`,
	},
	{
		name: "env in a target",
		src: engines + `tools:
  - name: a
    description: d
    engine: local
    work:
      name: ${TASKGATE_TEST_UNSET}
    inputSchema: {type: object}
`,
		want: `m.yaml:9:13: tools[0].work.name: environment variable TASKGATE_TEST_UNSET is not set (set it, or give a default: ${TASKGATE_TEST_UNSET:-VALUE})`,
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
    engine: local
    work: {name: A}
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
    engine: local
    work: {name: A}
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
    engine: local
    work: {name: A}
    inputSchema: {type: object}
`,
		want: `m.yaml:5:11: tools[0].name: "wait and echo" is not a valid tool name (use 1 to 64 letters, digits, "_", "-" and ".")`,
	},
	{
		name: "tool name too long",
		src: engines + `tools:
  - name: a123456789b123456789c123456789d123456789e123456789f123456789g12345
    description: d
    engine: local
    work: {name: A}
    inputSchema: {type: object}
`,
		want: `m.yaml:5:11: tools[0].name: "a123456789b123456789c123456789d123456789e123456789f123456789g12345" is not a valid tool name (use 1 to 64 letters, digits, "_", "-" and ".")`,
	},
	{
		name: "empty description",
		src: engines + `tools:
  - name: a
    description: "  "
    engine: local
    work: {name: A}
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
    engine: local
    work: {name: A}
    inputSchema: {type: object}
`,
		want: `m.yaml:6:11: tools[0].title: has no value (give it a value or remove the key)`,
	},
	{
		name: "duplicate tool name",
		src: engines + `tools:
  - {name: a, description: d, engine: local, work: {name: A}, inputSchema: {type: object}}
  - {name: a, description: d, engine: local, work: {name: A}, inputSchema: {type: object}}
`,
		want: `m.yaml:6:12: tools[1].name: tool "a" is already defined at m.yaml:5:12 (tool names must be unique across all mapping files)`,
	},
	{
		name: "unknown engine",
		src: engines + `tools:
  - {name: a, description: d, engine: locl, work: {name: A}, inputSchema: {type: object}}
`,
		want: `m.yaml:5:39: tools[0].engine: no engine named "locl" (did you mean "local"? known engines: local, remote)`,
	},
	{
		name: "unknown engine, no near match",
		src: engines + `tools:
  - {name: a, description: d, engine: prod, work: {name: A}, inputSchema: {type: object}}
`,
		want: `m.yaml:5:39: tools[0].engine: no engine named "prod" (known engines: local, remote)`,
	},
	{
		name: "no engines at all",
		src: `tools:
  - {name: a, description: d, engine: prod, work: {name: A}, inputSchema: {type: object}}
`,
		want: `m.yaml:2:39: tools[0].engine: no engine named "prod" (no engines are defined: add one under engines:)`,
	},
	{
		name: "the target of another kind of engine",
		src: engines + `tools:
  - name: a
    description: d
    engine: remote
    work: {name: A}
    inputSchema: {type: object}
`,
		want: `m.yaml:5:5: tools[0]: missing required key "queue": engine "remote" is Beta (add queue: NAME)
m.yaml:8:5: tools[0].work: engine "remote" is Beta, not Alpha (Beta engines take queue: NAME)`,
	},
	{
		name: "two targets",
		src: engines + `tools:
  - name: a
    description: d
    engine: local
    queue: Q
    work: {name: A}
    inputSchema: {type: object}
`,
		want: `m.yaml:8:5: tools[0].queue: engine "local" is Alpha, not Beta (Alpha engines take work: {name: ...})`,
	},
	{
		name: "target missing keys",
		src: engines + `tools:
  - name: a
    description: d
    engine: local
    work: {nmae: A}
    inputSchema: {type: object}
`,
		want: `m.yaml:8:11: tools[0].work: missing required key "name" (the work to start)
m.yaml:8:12: tools[0].work: unknown key "nmae" (did you mean "name"?)`,
	},
	{
		name: "target of the wrong kind",
		src: engines + `tools:
  - name: a
    description: d
    engine: local
    work: A
    inputSchema: {type: object}
`,
		want: `m.yaml:8:11: tools[0].work: must be a mapping, not a string (write work: {name: ...})`,
	},
	{
		name: "target without value",
		src: engines + `tools:
  - name: a
    description: d
    engine: remote
    queue:
    inputSchema: {type: object}
`,
		want: `m.yaml:8:11: tools[0].queue: has no value (give it a value or remove the key)`,
	},
	{
		name: "bad taskSupport",
		src: engines + `tools:
  - name: a
    description: d
    engine: local
    work: {name: A}
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
    engine: local
    work: {name: A}
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
    engine: local
    work: {name: A}
    protocolErrors: [Crash, "", 3]
    text: "(.name"
    inputSchema: {type: object}
`,
		want: `m.yaml:9:29: tools[0].protocolErrors[1]: is empty (the failure types that are protocol errors, like [Internal.Crash, Example.Failure])
m.yaml:9:33: tools[0].protocolErrors[2]: must be a string, not an integer (quote it: "3")
m.yaml:10:11: tools[0].text: invalid jq program: unexpected EOF (see https://jqlang.org/manual/)`,
	},
	{
		name: "protocolErrors not a list",
		src: engines + `tools:
  - name: a
    description: d
    engine: local
    work: {name: A}
    protocolErrors: Crash
    inputSchema: {type: object}
`,
		want: `m.yaml:9:21: tools[0].protocolErrors: must be a list of strings, not a string (the failure types that are protocol errors, like [Internal.Crash, Example.Failure])`,
	},
	{
		name: "bad budgets",
		src: `engines:
  a: {alpha: {url: "http://x"}, budget: 5}
  b: {alpha: {url: "http://x"}, budget: {burst: 2}}
  c: {alpha: {url: "http://x"}, budget: {readsPerSecond: 0}}
  d: {alpha: {url: "http://x"}, budget: {readsPerSecond: fast}}
  e: {alpha: {url: "http://x"}, budget: {readsPerSecond: 2, burst: 1.5}}
  f: {alpha: {url: "http://x"}, budget: {readsPerSecond: 2, brust: 3}}
  g: {alpha: {url: "http://x"}, budget: limited}
`,
		want: `m.yaml:2:41: engines.a.budget: must be a mapping or unlimited, not an integer (budget: {readsPerSecond: 5, burst: 10}, or budget: unlimited)
m.yaml:3:41: engines.b.budget: missing required key "readsPerSecond" (budget: {readsPerSecond: 5, burst: 10}, or budget: unlimited)
m.yaml:4:58: engines.c.budget.readsPerSecond: must be a positive number, not 0 (the reads per second taskgate may make of the engine, like 5 or 0.5; or budget: unlimited)
m.yaml:5:58: engines.d.budget.readsPerSecond: must be a positive number, not fast (the reads per second taskgate may make of the engine, like 5 or 0.5; or budget: unlimited)
m.yaml:6:68: engines.e.budget.burst: must be a whole number of at least 1, not 1.5 (how many reads may go at once after a quiet spell, like 10)
m.yaml:7:61: engines.f.budget: unknown key "brust" (did you mean "burst"?)
m.yaml:8:41: engines.g.budget: must be a mapping or unlimited, not a string (budget: {readsPerSecond: 5, burst: 10}, or budget: unlimited)`,
	},
	{
		name: "bad durations",
		src: engines + `tools:
  - name: a
    description: d
    engine: local
    work: {name: A, timeout: 1d}
    timeout: 60
    pollInterval: 50ms
    ttl: forever
    inputSchema: {type: object}
  - name: b
    description: d
    engine: local
    work: {name: A}
    timeout: 0s
    ttl: -1h
    inputSchema: {type: object}
  - name: c
    description: d
    engine: local
    work: {name: A}
    pollInterval: 5s
    pollIntervalMax: 2s
    pollIntervalGrowsAfter: 0s
    maxStaleness: 10ms
    inputSchema: {type: object}
`,
		want: `m.yaml:8:30: tools[0].work.timeout: "1d" is not a duration (use a Go duration like 30s, 5m, 24h)
m.yaml:9:14: tools[0].timeout: "60" is not a duration (use a Go duration like 30s, 5m, 24h)
m.yaml:10:19: tools[0].pollInterval: must be at least 100ms, not 50ms (use a Go duration like 30s, 5m, 24h)
m.yaml:11:10: tools[0].ttl: "forever" is not a duration (use a Go duration like 30s, 5m, 24h, or unlimited)
m.yaml:17:14: tools[1].timeout: must be positive, not 0s (use a Go duration like 30s, 5m, 24h)
m.yaml:18:10: tools[1].ttl: must be positive, not -1h (use a Go duration like 30s, 5m, 24h, or unlimited)
m.yaml:25:22: tools[2].pollIntervalMax: must be at least pollInterval (5s), not 2s (the interval grows from pollInterval up to pollIntervalMax; set them equal for a fixed interval)
m.yaml:26:29: tools[2].pollIntervalGrowsAfter: must be positive, not 0s (use a Go duration like 30s, 5m, 24h)
m.yaml:27:19: tools[2].maxStaleness: must be at least 100ms, not 10ms (use a Go duration like 30s, 5m, 24h)`,
	},

	// Schemas.
	{
		name: "inputSchema not a mapping",
		src: engines + `tools:
  - {name: a, description: d, engine: local, work: {name: A}, inputSchema: object}
`,
		want: `m.yaml:5:76: tools[0].inputSchema: must be a mapping, not a string (write a JSON Schema like {type: object, properties: {...}})`,
	},
	{
		name: "inputSchema without type",
		src: engines + `tools:
  - name: a
    description: d
    engine: local
    work: {name: A}
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
    engine: local
    work: {name: A}
    inputSchema: {type: array}
`,
		want: `m.yaml:9:25: tools[0].inputSchema.type: must be object (tool arguments and structured results are JSON objects)`,
	},
	{
		name: "schema keyword problems",
		src: engines + `tools:
  - name: a
    description: d
    engine: local
    work: {name: A}
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
    engine: local
    work: {name: A}
    inputSchema:
      type: object
      properties:
        a: {$ref: "#/$defs/missing"}
`,
		want: `m.yaml:9:5: tools[0].inputSchema: invalid JSON Schema: json-pointer in "#/$defs/missing" not found (see https://json-schema.org/understanding-json-schema)`,
	},
	{
		name: "schema default of the wrong type",
		src: engines + `tools:
  - name: a
    description: d
    engine: local
    work: {name: A}
    inputSchema:
      type: object
      properties:
        n: {type: integer, default: ten}
`,
		want: `m.yaml:12:37: tools[0].inputSchema.properties.n.default: does not fit its schema: has type string, want integer (a default must fit the schema it is the default of)`,
	},
	{
		name: "schema default of an object without a required key",
		src: engines + `tools:
  - name: a
    description: d
    engine: local
    work: {name: A}
    inputSchema:
      type: object
      properties:
        p: {$ref: "#/$defs/point"}
      $defs:
        point: {type: object, properties: {x: {type: integer}}, required: [x], default: {y: 1}}
`,
		want: `m.yaml:14:89: tools[0].inputSchema.$defs.point.default: does not fit its schema: key "x" is required (a default must fit the schema it is the default of)`,
	},
	{
		name: "schema version",
		src: engines + `tools:
  - name: a
    description: d
    engine: local
    work: {name: A}
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
    engine: local
    work: {name: A}
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
    engine: local
    work: {name: A}
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
    engine: local
    work: {name: A}
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
    engine: local
    work: {name: A}
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
    engine: local
    work: {name: A}
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
    engine: local
    work: {name: A}
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
    engine: local
    work: {name: A}
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
    engine: local
    work: {name: A}
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
