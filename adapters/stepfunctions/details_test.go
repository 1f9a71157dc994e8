package stepfunctions

import (
	"testing"

	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
	"github.com/taskgate/taskgate/mapping"
)

func TestHistoryWorth(t *testing.T) {
	for _, c := range []struct {
		name, definition string
		want             bool
	}{
		{"one Wait", `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":5,"Next":"P"},"P":{"Type":"Pass","End":true}}}`, false},
		{"one Task", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","End":true}}}`, false},
		{"a Task and a Wait", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Next":"W"},"W":{"Type":"Wait","Seconds":5,"End":true}}}`, true},
		{"a retried Task", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Retry":[{"ErrorEquals":["States.ALL"]}],"End":true}}}`, true},
		{"a question", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage.waitForTaskToken","End":true}}}`, true},
		{"a Map", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`, true},
		{"a question in a Parallel branch", `{"StartAt":"P","States":{"P":{"Type":"Parallel","Branches":[{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage.waitForTaskToken","End":true}}}],"End":true}}}`, true},
		{"not a definition", `{"StartAt":`, true},
		{"no states", `{}`, true},
	} {
		if got := historyWorth(c.definition); got != c.want {
			t.Errorf("%s: historyWorth = %v, want %v", c.name, got, c.want)
		}
	}
	defs := sfnexamples.Definitions()
	for name, want := range map[string]bool{
		sfnexamples.WaitAndEcho: false, sfnexamples.WaitAndFail: false,
		sfnexamples.AskAndEcho: true, sfnexamples.AskTwoAndEcho: true, sfnexamples.ApproveDeployment: true,
		sfnexamples.BuildRelease: true, sfnexamples.OrderPipeline: true,
	} {
		if got := historyWorth(defs[name]); got != want {
			t.Errorf("example %s: historyWorth = %v, want %v", name, got, want)
		}
	}
}

// The long form of stateMachine says whether running polls read the history.
func TestLongFormTarget(t *testing.T) {
	const arn = "arn:aws:states:us-east-1:123456789012:stateMachine:orders"
	for src, want := range map[string]readHistory{
		`stateMachine: ` + arn:                               historyAuto,
		`stateMachine: {arn: "` + arn + `"}`:                 historyAuto,
		`stateMachine: {arn: "` + arn + `", history: true}`:  historyRead,
		`stateMachine: {arn: "` + arn + `", history: false}`: historySkip,
	} {
		set, err := mapping.Parse("t.yaml", []byte("engines: {a: {stepfunctions: {}}}\ntools:\n  - {name: t, description: d, engine: a, inputSchema: {type: object}, "+src+"}\n"))
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		got, ok := set.Tools[0].Target.Spec.(spec)
		if target := set.Tools[0].Target; !ok || target.Name != arn || got.history != want || got.String() != arn {
			t.Errorf("%s: target %+v, want %s with history %v", src, target, arn, want)
		}
	}
}
