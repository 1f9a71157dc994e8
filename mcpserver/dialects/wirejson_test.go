package dialects

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Every shape of a tasks/get answer, written by hand and by encoding/json: the same bytes, or the
// hand-written encoder declines it.
func TestDetailedTaskWritesAsEncodingJSON(t *testing.T) {
	ttl := int64(3600000)
	odd := "quote \" backslash \\ <html> & \n\t\x01 é \u2028 \xff"
	info := taskInfo{TaskID: "tg1.k1.abc_-", Status: "completed", CreatedAt: "2026-12-02T03:04:05.006Z", LastUpdatedAt: "2026-12-02T03:04:06.007Z"}
	withAll := info
	withAll.StatusMessage, withAll.TTLMs, withAll.PollIntervalMs = odd, &ttl, 5000
	impl := &mcp.Implementation{Name: "taskgate", Title: "<t>", Version: "1 <dev>"}
	serverInfo, err := encodeJSON(mcp.Meta{mcp.MetaKeyServerInfo: impl})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		task     detailedTask
		declined bool
	}{
		{name: "working", task: detailedTask{taskInfo: info}},
		{name: "every member", task: detailedTask{taskInfo: withAll}},
		{name: "text result", task: detailedTask{taskInfo: info, Result: &callToolResult{Content: []textContent{{Text: odd}}}}},
		{name: "structured result with space", task: detailedTask{taskInfo: info, Result: &callToolResult{
			Content: []textContent{{Text: "{}"}}, StructuredContent: json.RawMessage(" {\"a\" : [1, 2.5e3, \"<&>\"],\n \"b\": null} "), IsError: true}}},
		{name: "two contents", task: detailedTask{taskInfo: info, Result: &callToolResult{Content: []textContent{{Text: "a"}, {Text: "b"}}}}},
		{name: "failure", task: detailedTask{taskInfo: withAll, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: odd}}},
		{name: "no content", task: detailedTask{taskInfo: info, Result: &callToolResult{}}, declined: true},
		{name: "invalid structured content", task: detailedTask{taskInfo: info, Result: &callToolResult{Content: []textContent{}, StructuredContent: json.RawMessage(`{"a":`)}}, declined: true},
		{name: "error data", task: detailedTask{taskInfo: info, Error: &jsonrpc.Error{Code: 1, Message: "m", Data: json.RawMessage(`{}`)}}, declined: true},
		{name: "result meta", task: detailedTask{taskInfo: info, Result: &callToolResult{ResultBase: mcp.ResultBase{Meta: mcp.Meta{"k": 1}}, Content: []textContent{}}}, declined: true},
		{name: "input requests", task: detailedTask{taskInfo: info, InputRequests: inputRequests{{key: "q", req: inputRequest{Params: elicitParams{Message: "?", RequestedSchema: json.RawMessage(`{}`)}}}}}, declined: true},
	} {
		for _, meta := range [][]byte{nil, serverInfo} {
			got, ok := c.task.AppendJSON([]byte("x"), meta)
			if ok == c.declined {
				t.Errorf("%s (meta %s): written %v, want %v", c.name, meta, ok, !c.declined)
				continue
			}
			if !ok {
				continue
			}
			task := c.task
			if meta != nil {
				task.Meta = mcp.Meta{mcp.MetaKeyServerInfo: impl}
			}
			want, err := encodeJSON(&task)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if want = append([]byte("x"), want...); !bytes.Equal(got, want) {
				t.Errorf("%s (meta %s):\n got %s\nwant %s", c.name, meta, got, want)
			}
		}
	}
}

// encodeJSON is v as the answers encode it: without HTML escaping or a newline.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
