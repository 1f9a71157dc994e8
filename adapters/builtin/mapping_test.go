package builtin_test

import (
	"testing"

	"github.com/taskgate/taskgate/mapping"
)

// TestTargetsOfAnotherKind: a tool that names the target key of another driver than its engine's
// hears which key its engine takes.
func TestTargetsOfAnotherKind(t *testing.T) {
	const engines = `engines:
  temporal: {temporal: {address: "127.0.0.1:7233"}}
  sfn: {stepfunctions: {region: us-east-1}}
`
	for _, c := range []struct{ name, src, want string }{
		{"workflow on Step Functions", engines + `tools:
  - name: a
    description: d
    engine: sfn
    workflow: {type: A, taskQueue: q}
    inputSchema: {type: object}
`, `m.yaml:5:5: tools[0]: missing required key "stateMachine": engine "sfn" is Step Functions (add stateMachine: arn:aws:states:REGION:ACCOUNT:stateMachine:NAME)
m.yaml:8:5: tools[0].workflow: engine "sfn" is Step Functions, not Temporal (Step Functions engines take stateMachine: arn:aws:states:REGION:ACCOUNT:stateMachine:NAME)`},
		{"stateMachine on Temporal", engines + `tools:
  - name: a
    description: d
    engine: temporal
    stateMachine: arn:aws:states:us-east-1:123456789012:stateMachine:a
    inputSchema: {type: object}
`, `m.yaml:5:5: tools[0]: missing required key "workflow": engine "temporal" is Temporal (add workflow: {type: ..., taskQueue: ...})
m.yaml:8:5: tools[0].stateMachine: engine "temporal" is Temporal, not Step Functions (Temporal engines take workflow: {type: ..., taskQueue: ...})`},
		{"engine without kind", `engines:
  a: {}
`, `m.yaml:2:6: engines.a: needs restate:, stepfunctions: or temporal: (add restate: {ingress: http://127.0.0.1:8080, admin: http://127.0.0.1:9070}, stepfunctions: {region: us-east-1} or temporal: {address: 127.0.0.1:7233})`},
		{"invoke on Temporal", engines + `tools:
  - name: a
    description: d
    engine: temporal
    invoke: {service: A, handler: run}
    inputSchema: {type: object}
`, `m.yaml:5:5: tools[0]: missing required key "workflow": engine "temporal" is Temporal (add workflow: {type: ..., taskQueue: ...})
m.yaml:8:5: tools[0].invoke: engine "temporal" is Temporal, not Restate (Temporal engines take workflow: {type: ..., taskQueue: ...})`},
		{"engine with both kinds", `engines:
  a:
    temporal: {address: "a:1"}
    stepfunctions: {region: us-east-1}
`, `m.yaml:4:5: engines.a: has both temporal: and stepfunctions: (an engine block connects to one engine: give each its own engine name)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := mapping.Parse("m.yaml", []byte(c.src))
			if err == nil || err.Error() != c.want {
				t.Errorf("got:\n%v\nwant:\n%s", err, c.want)
			}
		})
	}
}
