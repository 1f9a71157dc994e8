package security

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskgate/taskgate/internal/testenv"
)

// writeEchoes writes the mapping of the listen probes: a tool anyone may call, and brief_echo,
// whose ids expire after ttl; with the OAuth issuer whose keys are at jwks, when set.
func writeEchoes(t *testing.T, jwks string, ttl time.Duration) string {
	t.Helper()
	return writeTools(t, "", jwks, fmt.Sprintf(`  - name: wait_and_echo
    description: Waits, then echoes the text.
    engine: local-temporal
    workflow: {type: WaitAndEcho, taskQueue: taskgate-examples}
    pollInterval: 500ms
    inputSchema: {type: object, properties: {seconds: {type: number}, text: {type: string}}, required: [seconds, text]}
  - name: brief_echo
    description: Its task ids expire soon.
    engine: local-temporal
    workflow: {type: WaitAndEcho, taskQueue: taskgate-examples}
    pollInterval: 500ms
    ttl: %s
    inputSchema: {type: object, properties: {seconds: {type: number}, text: {type: string}}, required: [seconds, text]}
`, ttl))
}

// TestProbesListen: what a listener is told of tasks that are not its own (issue 30).
func TestProbesListen(t *testing.T) {
	testenv.TemporalAddress(t)
	bin := binary(t)
	r := &results{}
	defer func() { t.Logf("taskgate %s:\n%s", bin, r.table()) }()
	dir := writeEchoes(t, "", time.Second)
	sealed := startDev(t, bin, dir)
	native := startDev(t, bin, dir, "--token-format", "native")
	listenOthers(t, r, "sealed", sealed, true)
	listenOthers(t, r, "native", native, false)
	listenUndeclared(t, r, sealed)
}

// listenOthers: bob listens on alice's id, a forged id, an expired one (sealed ids carry their
// ttl) and one of his own: only his is acknowledged, and no notification names any other.
func listenOthers(t *testing.T, r *results, ids string, d *dev, expiring bool) {
	alices := modernStart(t, d, aliceKey, "wait_and_echo", map[string]any{"seconds": 2, "text": "alice's"})
	bobs := modernStart(t, d, bobKey, "wait_and_echo", map[string]any{"seconds": 2, "text": "bob's"})
	forged := bobs[:len(bobs)-6] + strings.Repeat("A", 6)
	others := []string{alices, forged}
	if expiring {
		expired := modernStart(t, d, bobKey, "brief_echo", map[string]any{"seconds": 60, "text": "gone"})
		time.Sleep(1500 * time.Millisecond)
		others = append(others, expired)
	}
	events, status := listenAs(t, d, bobKey, append(slices.Clone(others), bobs), true)
	acked, told := listenedOf(events)
	r.add(t, "listen", ids+" ids: bob listens on alice's id, a forged id"+map[bool]string{true: ", an expired one", false: ""}[expiring]+" and his own",
		"only his own acknowledged", fmt.Sprintf("HTTP %d, acknowledged %s", status, shortIDs(acked, bobs)), slices.Equal(acked, []string{bobs}))
	leaked := slices.ContainsFunc(told, func(id string) bool { return slices.Contains(others, id) })
	ended := len(events) > 0 && strings.Contains(events[len(events)-1], `"result"`) && strings.Contains(events[len(events)-2], `"completed"`)
	r.add(t, "listen", ids+" ids: what bob's stream carries", "notifications of his task only, to its end, then the result",
		fmt.Sprintf("%d messages; notifications of %s; ended with the result: %v", len(events), shortIDs(told, bobs), ended), !leaked && ended && len(told) > 0)
}

// listenUndeclared: a 2026-07-28 client that did not declare the tasks extension is told to.
func listenUndeclared(t *testing.T, r *results, d *dev) {
	bobs := modernStart(t, d, bobKey, "wait_and_echo", map[string]any{"seconds": 0, "text": "bob's"})
	events, status := listenAs(t, d, bobKey, []string{bobs}, false)
	r.add(t, "listen", "a client without the tasks extension listens on its own task", "-32021 naming the extension, no notification",
		fmt.Sprintf("HTTP %d: %s", status, strings.Join(events, " ")),
		len(events) == 1 && strings.Contains(events[0], `"code":-32021`) && strings.Contains(events[0], "io.modelcontextprotocol/tasks"))
}

// modernStart starts tool as bearer's 2026-07-28 task and returns its id.
func modernStart(t *testing.T, d *dev, bearer, tool string, args map[string]any) string {
	t.Helper()
	meta, h := modern("tools/call", tool)
	created := must(t, d.url, bearer, rpc("tools/call", map[string]any{"name": tool, "arguments": args, "_meta": meta}), h...)
	var task struct{ TaskID string }
	if json.Unmarshal(created.msg.Result, &task); task.TaskID == "" {
		t.Fatalf("starting %s: %s", tool, created)
	}
	return task.TaskID
}

// listenAs sends subscriptions/listen for ids as bearer, declaring the tasks extension or not, and
// returns every JSON-RPC message of the answer (its events, or its plain JSON body) once it ends,
// within 60 s.
func listenAs(t *testing.T, d *dev, bearer string, ids []string, declared bool) (messages []string, status int) {
	t.Helper()
	meta, h := modern("subscriptions/listen", "")
	if !declared {
		meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := post(ctx, d.url, bearer, rpc("subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": ids}, "_meta": meta}), h[:4]...)
	if err != nil {
		t.Fatalf("listening: %v (%s)", err, a.body)
	}
	for line := range strings.SplitSeq(a.body, "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			messages = append(messages, data)
		}
	}
	if !strings.Contains(a.body, "data: ") {
		messages = append(messages, strings.TrimSpace(a.body))
	}
	return messages, a.status
}

// listenedOf reads a listen's messages: the ids acknowledged, and the ids of the tasks notified.
func listenedOf(messages []string) (acked, told []string) {
	for _, m := range messages {
		var n struct {
			Method string
			Params struct {
				TaskID        string
				Notifications struct{ TaskIDs []string }
			}
		}
		json.Unmarshal([]byte(m), &n)
		switch n.Method {
		case "notifications/subscriptions/acknowledged":
			acked = n.Params.Notifications.TaskIDs
		case "notifications/tasks":
			if !slices.Contains(told, n.Params.TaskID) {
				told = append(told, n.Params.TaskID)
			}
		}
	}
	return acked, told
}

// shortIDs names ids for the table: "his own" for bobs, else "another".
func shortIDs(ids []string, bobs string) string {
	var names []string
	for _, id := range ids {
		names = append(names, map[bool]string{true: "his own", false: "another"}[id == bobs])
	}
	return "[" + strings.Join(names, ", ") + "]"
}
