package mcpserver

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
				switch p := paramsOf(req).(type) {
				case *taskParams:
					served.TaskID = p.TaskID
				case *mcp.CallToolParamsRaw:
					served.Tool = p.Name
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
