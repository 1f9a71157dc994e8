package main

// taskgate call answering questions, against the example workflows on the test's Temporal server:
// from --answer and --decline, on a terminal, and with neither. (How the prompts read typed
// lines is tested in internal/taskcall.)

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/temporal"
	"github.com/taskgate/taskgate/internal/taskcall"
	"github.com/taskgate/taskgate/tasks/token"
)

// askingMappings are the examples and the test tools, among them echo_after_asking (asks before
// it starts) and ask_two_and_echo (asks two questions at once).
var askingMappings = []string{exampleMapping, "../../mcpserver/testdata/test-tools.yaml"}

const deployArgs = `{"version": "1.4.0", "env": "staging", "stepSeconds": 0}`

// callWith runs taskgate call with flags, standard input not a terminal.
func callWith(t *testing.T, tool, args string, flags ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errs bytes.Buffer
	cmdline := []string{"call", tool, "--args", args}
	for _, c := range askingMappings {
		cmdline = append(cmdline, "--config", c)
	}
	code = run(t.Context(), append(cmdline, flags...), strings.NewReader("a\ny\n"), &out, &errs)
	return code, out.String(), errs.String()
}

func TestCallAnswersFromFlags(t *testing.T) {
	startWorker(t)
	for _, tc := range []struct {
		name, tool, args string
		flags            []string
		code             int
		stdout, stderr   string
	}{
		{"answered", "approve_deployment", deployArgs, []string{"--answer", `approve={"approve": true, "reason": "tested"}`}, 0,
			"Deployed 1.4.0 to staging.\n", `question "approve": Deploy 1.4.0 to staging?`},
		{"declined", "approve_deployment", deployArgs, []string{"--decline", "approve"}, 0,
			"Did not deploy 1.4.0 to staging: declined.\n", `question "approve": Deploy 1.4.0 to staging?`},
		{"asked before the start", "echo_after_asking", `{}`, []string{"--answer", `who={"name": "Ada"}`, "--answer", `go={"confirm": true}`}, 0,
			"Hello, Ada!\n", `question "go": Greet now?`},
		{"declined before the start", "echo_after_asking", `{}`, []string{"--decline", "who"}, 1,
			"", `echo_after_asking did not start: the question "who" was declined (Whom should I greet?)`},
		{"no answer before the start", "echo_after_asking", `{}`, []string{"--answer", `who={"name": "Ada"}`}, taskcall.ExitUnanswered, "",
			`taskgate call: the question "go" (Greet now?) has no answer: there is no terminal to ask it on; answer it with --answer 'go={"confirm": true}' or --decline go` + "\necho_after_asking did not start.\n"},
		{"refused before the start", "echo_after_asking", `{}`, []string{"--answer", `who={"name": ""}`}, taskcall.ExitUnanswered, "",
			`taskgate call: the question "who" (Whom should I greet?) has no answer: the server refused the answer given: the answer to "who" does not fit its schema: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := callWith(t, tc.tool, tc.args, tc.flags...)
			if code != tc.code || !strings.HasPrefix(stdout, tc.stdout) || (tc.stdout == "" && stdout != "") || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("exit status %d, want %d\nstdout %q, want it to start with %q\nstderr %q, want it to have %q", code, tc.code, stdout, tc.stdout, stderr, tc.stderr)
			}
		})
	}
}

// TestCallUnanswered: a question with no answer and no terminal ends the call with exit status 3,
// naming the question and the flags, and the workflow goes on waiting.
func TestCallUnanswered(t *testing.T) {
	tc, left := leftWaiting(t)
	code, stdout, stderr := callWith(t, "approve_deployment", deployArgs)
	const want = `taskgate call: the question "approve" (Deploy 1.4.0 to staging?) has no answer: there is no terminal to ask it on; answer it with --answer 'approve={"approve": true, "reason": "..."}' or --decline approve` + "\n"
	if code != taskcall.ExitUnanswered || stdout != "" || !strings.Contains(stderr, want) {
		t.Fatalf("exit status %d, want %d; stdout %q\nstderr %q\nwant it to have %q", code, taskcall.ExitUnanswered, stdout, stderr, want)
	}
	ref := left(stderr)
	time.Sleep(time.Second) // the call has exited; the workflow must not follow it
	wf, run, _ := temporal.WorkflowOf(ref)
	d, err := tc.DescribeWorkflow(t.Context(), wf, run)
	if err != nil {
		t.Fatal(err)
	}
	if st := d.RawResponse.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Errorf("the workflow is %s after the call left it unanswered, want RUNNING", st)
	}
}

// leftWaiting starts the example worker and seals the task ids of the calls that follow with a
// key of the test's. The function it returns reads the id that a call printed as it left its task
// waiting, and cancels that workflow when the test ends.
func leftWaiting(t *testing.T) (client.Client, func(stderr string) adapters.Ref) {
	tc := startWorker(t)
	key := token.NewKey("test")
	t.Setenv("TASKGATE_TOKEN_KEYS", key)
	keys, _ := token.ParseKeys(key)
	tokens, err := token.NewSealed(keys)
	if err != nil {
		t.Fatal(err)
	}
	return tc, func(stderr string) adapters.Ref {
		t.Helper()
		m := regexp.MustCompile("\nThe task goes on, waiting for the answer: (\\S+)\n$").FindStringSubmatch(stderr)
		if m == nil {
			t.Fatalf("stderr does not end with the id of the task left waiting:\n%s", stderr)
		}
		claims, err := tokens.Open(m[1], time.Now())
		if err != nil {
			t.Fatalf("the printed task id %q does not open: %v", m[1], err)
		}
		wf, run, _ := temporal.WorkflowOf(claims.Ref)
		t.Cleanup(func() { tc.CancelWorkflow(context.Background(), wf, run) })
		return claims.Ref
	}
}

// TestCallAsksOnTerminal: on a terminal, the status line makes way for the question and the
// prompts, and comes back once they are answered.
func TestCallAsksOnTerminal(t *testing.T) {
	startWorker(t)
	cmd, tty, s := onTerminal(t, nil, "call", "approve_deployment", "--args", deployArgs, "--config", exampleMapping)
	for _, step := range []struct{ prompt, typed string }{
		{`approve: (a)nswer, (d)ecline, dis(m)iss or (l)ater? [a] `, "\r"},
		{`Approve (Deploy this version now?) [y/n]: `, "y\r"},
		{`Reason (Why, for the deployment log.) [optional, Enter to skip]: `, "\r"},
	} {
		s.waitFor(t, regexp.MustCompile(regexp.QuoteMeta(step.prompt)+`$`))
		if _, err := tty.Write([]byte(step.typed)); err != nil {
			t.Fatal(err)
		}
	}
	if code := exitStatus(t, cmd, s); code != 0 {
		t.Fatalf("exit status %d:\n%q", code, s.String())
	}
	out := s.String()
	_, after, _ := strings.Cut(out, "Enter to skip]: ")
	if strings.Contains(after, "waiting for an answer") {
		t.Errorf("the status line went back to waiting after the answer was sent:\n%q", after)
	}
	for _, re := range []string{
		`\r\x1b\[Kquestion "approve": Deploy 1\.4\.0 to staging\?\r\n\r\x1b\[K  approve: `,
		`\rapprove_deployment \d+\.\ds completed: Completed \(COMPLETED\)\.\x1b\[K\r\nDeployed 1\.4\.0 to staging\.\r\n`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("the terminal does not show %s:\n%q", re, out)
		}
	}
}

func TestCallAnswerFlags(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--answer", "approve"}, `taskgate: --answer approve: want KEY=JSON, the key of the question and the form's content as one JSON object, like --answer 'approve={"approve": true}'` + "\n"},
		{[]string{"--answer", "approve=[true]"}, `taskgate: --answer approve=[true]: the answer must be a JSON object of the form's fields, like --answer 'approve={"approve": true}'` + "\n"},
		{[]string{"--answer", "a={}", "--answer", `a={"x": 1}`}, `taskgate: --answer a={"x": 1}: "a" has an answer already` + "\n"},
		{[]string{"--answer", "a={}", "--decline", "a"}, `taskgate: --decline "a": want the key of a question that has no --answer or --decline yet` + "\n"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), append([]string{"call", "echo", "--url", "http://127.0.0.1:1/mcp"}, tc.flags...), nil, &stdout, &stderr)
		if code != 2 || stderr.String() != tc.want {
			t.Errorf("%q: exit status %d, stderr %q; want 2, %q", tc.flags, code, &stderr, tc.want)
		}
	}
}
