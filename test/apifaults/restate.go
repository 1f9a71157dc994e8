package apifaults

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"
)

// RestateQuery is the operation of the admin API that reads invocations: its SQL endpoint, which
// taskgate's Restate driver asks for every read of an invocation's status (and for sweeps).
const RestateQuery = "POST /query"

// RestateAdmin is an HTTP proxy in front of a Restate server's admin API. It names each call by
// its method and the first segment of its path ("POST /query", "GET /services",
// "PATCH /invocations"), and counts them. It passes every call through unchanged: the admin API
// has no published rate limit to imitate.
type RestateAdmin struct {
	srv   *http.Server
	url   string
	calls counts
}

// NewRestateAdmin serves a proxy to the admin API at target (like http://127.0.0.1:9070) on a
// loopback port of its own, until Close.
func NewRestateAdmin(target string) (*RestateAdmin, error) {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("apifaults: %q is not a Restate admin API URL", target)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &RestateAdmin{url: "http://" + ln.Addr().String()}
	rp := httputil.NewSingleHostReverseProxy(u)
	p.srv = &http.Server{Handler: p.counting(rp), ReadHeaderTimeout: 10 * time.Second}
	go p.srv.Serve(ln)
	return p, nil
}

// URL returns the proxy's admin API URL, for the driver's admin setting.
func (p *RestateAdmin) URL() string { return p.url }

// Close stops the proxy.
func (p *RestateAdmin) Close() error { return p.srv.Close() }

// Calls counts the calls of op (like RestateQuery) that reached the proxy.
func (p *RestateAdmin) Calls(op string) int64 { return p.calls.get(op) }

// AllCalls counts the calls that reached the proxy, by operation.
func (p *RestateAdmin) AllCalls() map[string]int64 { return p.calls.all() }

func (p *RestateAdmin) counting(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.calls.add(restateOperation(r))
		next.ServeHTTP(w, r)
	})
}

// restateOperation names a call of the admin API: its method and its path's first segment.
func restateOperation(r *http.Request) string {
	first, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	return r.Method + " /" + first
}
