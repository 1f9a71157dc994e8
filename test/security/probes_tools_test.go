package security

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mcpserver/bearer/bearertest"
)

// The third round's probes of what a caller can do through its own tasks (issue 29, items 1, 2
// and 7): a task is read only through the tool it was started with, which its caller may use
// now, and the engines' records confirm no principal.

// writeSiblings writes a mapping with two tools on one workflow type, alice's whole output and
// everyone's count only, and a tool that needs the deploy scope.
func writeSiblings(t *testing.T, jwks string) string {
	t.Helper()
	return writeTools(t, "", jwks, `  - name: admin_summarize
    description: The whole output; alice's only.
    engine: local-temporal
    workflow: {type: WaitAndEcho, taskQueue: taskgate-examples}
    allow: {principals: [alice]}
    inputSchema: {type: object, properties: {seconds: {type: number}, text: {type: string}}, required: [seconds, text]}
  - name: summarize_count_only
    description: Only the length of the text.
    engine: local-temporal
    workflow: {type: WaitAndEcho, taskQueue: taskgate-examples}
    result: '{length: (.text | length)}'
    inputSchema: {type: object, properties: {seconds: {type: number}, text: {type: string}}, required: [seconds, text]}
  - name: deploy_scoped
    description: Asks before it deploys; needs the deploy scope.
    engine: local-temporal
    workflow: {type: ApproveDeployment, taskQueue: taskgate-examples}
    allow: {scopes: [deploy]}
    inputSchema: {type: object, properties: {version: {type: string}, env: {type: string}}, required: [version, env]}
    input: '{version, env, stepSeconds: 0}'
`)
}

func TestProbesToolBinding(t *testing.T) {
	testenv.TemporalAddress(t)
	bin := binary(t)
	r := &results{}
	defer func() { t.Logf("taskgate %s:\n%s", bin, r.table()) }()
	is := bearertest.New(t, issuerName)
	dir := writeSiblings(t, is.URL)
	sealed := startDev(t, bin, dir)
	native := startDev(t, bin, dir, "--token-format", "native")
	for _, d := range []struct {
		name string
		dev  *dev
	}{{"sealed", sealed}, {"native", native}} {
		siblingTool(t, r, d.name, d.dev)
	}
	hiddenCursor(t, r, sealed)
	scopesOnEveryRequest(t, r, sealed, is)
	keyedTags(t, r, native)
}

// siblingTool: bob's task of summarize_count_only is listed once and read through that tool only.
func siblingTool(t *testing.T, r *results, ids string, d *dev) {
	his := startTask(t, d.url, bobKey, "summarize_count_only", map[string]any{"seconds": 0, "text": "the whole secret output"})
	var listed struct {
		Tasks []struct{ TaskID string }
	}
	// The engine's listing shows a start a moment later, as visibility catches up.
	for deadline := time.Now().Add(10 * time.Second); len(listed.Tasks) == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		json.Unmarshal(must(t, d.url, bobKey, rpc("tasks/list", map[string]any{})).msg.Result, &listed)
	}
	r.add(t, "1 sibling tool", ids+" ids: bob lists his one task of summarize_count_only", "listed once",
		fmt.Sprintf("%d tasks listed", len(listed.Tasks)), len(listed.Tasks) == 1)
	leaked := false
	for _, id := range append([]string{his}, taskIDs(listed.Tasks)...) {
		res := awaitResult(t, d, bobKey, id)
		leaked = leaked || strings.Contains(res.body, "whole secret output") || !strings.Contains(res.body, `\"length\":23`) && !strings.Contains(res.body, `"length":23`)
	}
	r.add(t, "1 sibling tool", ids+" ids: tasks/result of every id bob holds for it", "only the count (summarize_count_only's transform), never the whole output",
		map[bool]string{true: "the whole output, or no count", false: "the count only"}[leaked], !leaked)
}

func taskIDs(tasks []struct{ TaskID string }) []string {
	var ids []string
	for _, t := range tasks {
		ids = append(ids, t.TaskID)
	}
	return ids
}

// awaitResult is the answer of tasks/result for id, once its task has ended.
func awaitResult(t *testing.T, d *dev, bearer, id string) answer {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var st struct{ Status string }
		json.Unmarshal(must(t, d.url, bearer, rpc("tasks/get", map[string]any{"taskId": id})).msg.Result, &st)
		if st.Status == "completed" || st.Status == "failed" || st.Status == "cancelled" || st.Status == "" {
			break
		}
	}
	return must(t, d.url, bearer, rpc("tasks/result", map[string]any{"taskId": id}))
}

// hiddenCursor: a list cursor naming a tool hidden from the caller answers as one naming no tool.
func hiddenCursor(t *testing.T, r *results, d *dev) {
	cursor := func(tool string) string {
		b, _ := json.Marshal(map[string]string{"t": tool})
		return base64.RawURLEncoding.EncodeToString(b)
	}
	hidden := must(t, d.url, bobKey, rpc("tasks/list", map[string]any{"cursor": cursor("admin_summarize")}))
	none := must(t, d.url, bobKey, rpc("tasks/list", map[string]any{"cursor": cursor("no_such_tool")}))
	r.add(t, "1 sibling tool", "bob's tasks/list cursor naming admin_summarize (hidden from him), and one naming no tool",
		"the same answer", fmt.Sprintf("hidden: %s; none: %s", hidden, none), hidden.String() == none.String() && !hidden.served())
}

// scopesOnEveryRequest: carol's token without the deploy scope cannot answer the question of the
// task her token with it started.
func scopesOnEveryRequest(t *testing.T, r *results, d *dev, is *bearertest.Issuer) {
	granted, lacking := is.Token(t, "carol", audience, "deploy", nil), is.Token(t, "carol", audience, "", nil)
	id := modernTask(t, d, granted, "deploy_scoped", map[string]any{"version": "1.0", "env": "prod"})
	answered := answerTask(t, d, lacking, id, "approve", map[string]any{"approve": true})
	status := awaitTask(t, d, granted, id, "input_required")
	r.add(t, "2 scopes", "carol's JWT without scope deploy answers her deploy_scoped task's question (tasks/update)",
		"refused (-32602, the scope named), the task still asks", fmt.Sprintf("%s; then %s", answered, status),
		answered.code() == -32602 && strings.Contains(answered.body, "deploy") && status == "input_required")
	meta, h := modern("tasks/cancel", id)
	must(t, d.url, granted, rpc("tasks/cancel", map[string]any{"taskId": id, "_meta": meta}), h...)
}

// keyedTags: alice's execution id carries no tag that her name alone gives.
func keyedTags(t *testing.T, r *results, d *dev) {
	id := startTask(t, d.url, aliceKey, "summarize_count_only", map[string]any{"seconds": 0, "text": "x"})
	sum := sha256.Sum256([]byte("alice"))
	guessed := driver.CallerTag(base64.RawURLEncoding.EncodeToString(sum[:16]))
	r.add(t, "7 caller tag", "alice's native task id (the workflow id) against the tag that her name gives, unkeyed",
		"no such tag", id, !strings.Contains(id, guessed))
}
