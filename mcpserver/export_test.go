package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/mcpserver/dialects"
)

// HTTPHandlers are the server's HTTP handler with its fast path, whose go-sdk handler counts in
// sdkServed the requests it is given, and the same handler without the fast path.
func (s *Server) HTTPHandlers(sdkServed *atomic.Int64) (fast, sdkOnly http.Handler) {
	sdk := s.sdkHTTP()
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sdkServed.Add(1)
		sdk.ServeHTTP(w, r)
	})
	return s.front.serve(s.fastPath(counted)), s.front.serve(sdk)
}

// Reading is what one reader made of a request: its method, and the task id and tool name of its
// params.
type Reading struct{ Method, TaskID, Tool string }

// WatchReadings tells seen, for each request go-sdk serves after the HTTP front read it, what the
// front read and what go-sdk's decoding handed the handlers.
func (s *Server) WatchReadings(seen func(front, served Reading)) {
	s.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if rd := readingOf(ctx); rd != nil {
				served := Reading{Method: method}
				switch p := dialects.ParamsOf(req).(type) {
				case *mcp.CallToolParamsRaw:
					served.Tool = p.Name
				case nil:
				default:
					if slices.Contains(s.dialects.Methods(), method) {
						var task struct {
							TaskID string `json:"taskId"`
						}
						raw, _ := json.Marshal(p)
						json.Unmarshal(raw, &task)
						served.TaskID = task.TaskID
					}
				}
				front := Reading{Method: rd.method}
				switch {
				case strings.HasPrefix(rd.method, "tasks/") && rd.method != "tasks/list":
					front.TaskID = rd.param("taskId")
				case rd.method == "tools/call":
					front.Tool = rd.param("name")
				}
				seen(front, served)
			}
			return next(ctx, method, req)
		}
	})
}
