package mcpserver

import (
	"net/http"
	"sync/atomic"
)

// HTTPHandlers are the server's HTTP handler with its fast path, whose go-sdk handler counts in
// sdkServed the requests it is given, and the same handler without the fast path.
func (s *Server) HTTPHandlers(sdkServed *atomic.Int64) (fast, sdkOnly http.Handler) {
	sdk := s.sdkHTTP()
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sdkServed.Add(1)
		sdk.ServeHTTP(w, r)
	})
	return s.httpFront(s.fastPath(counted)), s.httpFront(sdk)
}
