package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/tasks"
)

// TestOneReadingOfARequest sends each spelling of a request that decoders may read differently
// through both HTTP paths (the fast path, and go-sdk's) and on stdio. Each is either refused as a
// parse error or an invalid request (HTTP 400), or answered exactly as its canonical spelling is:
// never served as something the front did not check.
func TestOneReadingOfARequest(t *testing.T) {
	e := newEnvConfig(t, func(tc *tasks.Config, c *mcpserver.Config) {})
	var sdkServed atomic.Int64
	fastH, sdkH := e.srv.HTTPHandlers(&sdkServed)
	fast, sdk := httptest.NewServer(fastH), httptest.NewServer(sdkH)
	defer fast.Close()
	defer sdk.Close()
	c := rpctest.Modern(rpctest.HTTP{URL: fast.URL}, ext)
	id := call(t, c, "wait_and_echo", map[string]any{"seconds": 0, "text": "the real task"})["taskId"].(string)
	waitFor(t, c, id, "completed")
	task, _ := json.Marshal(id)

	get := func(params string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{` + params + `,"_meta":` + modernMeta + `}}`
	}
	poll := get(`"taskId":` + string(task))
	badCall := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait_and_echo","arguments":{"seconds":"x"},"_meta":` + modernMeta + `}}`
	const (
		parseError     = -32700
		invalidRequest = -32600
	)
	for _, v := range []struct {
		name, body, mcpName string
		// like is the canonical spelling the variant must be answered as; refused, the code it
		// must be refused with instead.
		like    string
		refused int
	}{
		{"trailing }", poll + `}`, "", "", parseError},
		{"trailing object", poll + `{}`, "", "", parseError},
		{"trailing space", poll + " \n", "", poll, 0},
		{"a byte order mark", "\ufeff" + poll, "", "", parseError},
		{"invalid UTF-8", strings.Replace(poll, `"2.0"`, "\"2.0\xff\"", 1), "", "", parseError},
		{"METHOD beside method", strings.Replace(poll, `"method"`, `"METHOD":"ping","method"`, 1), "", "", invalidRequest},
		{"Method twice", strings.Replace(poll, `"method":"tasks/get"`, `"method":"tasks/get","Method":"tasks/get"`, 1), "", "", invalidRequest},
		{"method twice", strings.Replace(poll, `"method":"tasks/get"`, `"method":"ping","method":"tasks/get"`, 1), "", "", invalidRequest},
		{"ID beside id", strings.Replace(poll, `"id":1`, `"id":1,"ID":2`, 1), "", "", invalidRequest},
		{"PARAMS beside params", strings.Replace(poll, `"params"`, `"PARAMS":{"taskId":"decoy"},"params"`, 1), "", "", invalidRequest},
		{"TASKID beside taskId, Mcp-Name decoy", get(`"taskId":` + string(task) + `,"TASKID":"decoy"`), "decoy", "", invalidRequest},
		{"taskId twice, Mcp-Name decoy", get(`"taskId":"decoy","taskId":` + string(task)), "decoy", "", invalidRequest},
		{"taskId spelled with an escape", get(`"task\u0049d":` + string(task)), id, poll, 0},
		{"taskId escaped beside taskId", get(`"taskId":` + string(task) + `,"task\u0049d":"decoy"`), "", "", invalidRequest},
		{"taſkId beside taskId", get(`"taskId":` + string(task) + `,"taſkId":"decoy"`), "", "", invalidRequest},
		{"only TASKID", get(`"TASKID":` + string(task)), "", get(`"other":1`), 0},
		{"method spelled with an escape", strings.Replace(poll, `"method"`, `"meth\u006fd"`, 1), "", poll, 0},
		{"twins in _meta", get(`"taskId":` + string(task) + `,"_meta":{"a":1,"A":2}`), "", "", invalidRequest},
		{"twins deep in _meta", strings.Replace(poll, `"io.modelcontextprotocol/tasks":{}`, `"io.modelcontextprotocol/tasks":{"x":[{"k":1,"K":2}]}`, 1), "", "", invalidRequest},
		{"NAME beside name", strings.Replace(badCall, `"name"`, `"NAME":"echo_for_alice","name"`, 1), "", "", invalidRequest},
		{"name spelled with an escape", strings.Replace(badCall, `"name"`, `"n\u0061me"`, 1), "", badCall, 0},
		{"twins in arguments", strings.Replace(badCall, `"seconds":"x"`, `"seconds":"x","Seconds":1`, 1), "", "", invalidRequest},
		{"a batch", "[" + poll + "]", "", "", invalidRequest},
	} {
		for path, url := range map[string]string{"fast path": fast.URL, "go-sdk": sdk.URL} {
			t.Run(v.name+" ("+path+")", func(t *testing.T) {
				method := "tasks/get"
				if strings.Contains(v.body, `"tools/call"`) {
					method = "tools/call"
				}
				h := headers("2026-07-28", method)
				if v.mcpName != "" {
					h.Set("Mcp-Name", v.mcpName)
				}
				got := exchangeWith(t, url, v.body, h)
				if v.refused != 0 {
					var answer struct {
						ID    json.RawMessage `json:"id"`
						Error struct{ Code int }
					}
					json.Unmarshal([]byte(got.body), &answer)
					if got.status != 400 || answer.Error.Code != v.refused || string(answer.ID) != "null" {
						t.Fatalf("HTTP %d %s, want 400 and error %d", got.status, got.body, v.refused)
					}
					return
				}
				if v.mcpName != "" {
					h.Set("Mcp-Name", id)
				}
				compare(t, got, exchangeWith(t, url, v.like, h))
			})
		}
		t.Run(v.name+" (stdio)", func(t *testing.T) {
			line := strings.ReplaceAll(v.body, "\n", " ") // a line break ends a stdio message
			lc := newLineClient(t, e.srv)
			if v.refused != 0 {
				lc.send(t, line)
				answer := lc.await(t, "null", line)
				if !strings.Contains(string(answer["error"]), fmt.Sprintf(`"code":%d`, v.refused)) {
					t.Fatalf("%s, want error %d", answer["error"], v.refused)
				}
				return
			}
			got := lc.roundTrip(t, line, "1")
			want := lc.roundTrip(t, v.like, "1")
			if string(got["result"]) != string(want["result"]) || string(got["error"]) != string(want["error"]) {
				t.Fatalf("%s %s, want %s %s", got["result"], got["error"], want["result"], want["error"])
			}
		})
	}
	if n := e.count.starts.Load(); n != 1 {
		t.Fatalf("%d executions started, want the real task's only", n)
	}
}
