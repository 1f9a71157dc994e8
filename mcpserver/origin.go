package mcpserver

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// originAllowed reports whether a browser may make this request (DNS rebinding and cross-site
// requests): no Origin header (not a browser), the page's own origin, an origin the operator
// allowed, or, on a loopback listener, a page served from loopback.
//
// Not net/http's CrossOriginProtection: it lets GET, HEAD and OPTIONS through whatever their
// Origin, where MCP answers a hostile Origin 403 on every request, and it trusts origins only one
// by one, port included, so a page on loopback (any port) cannot reach a loopback listener.
func originAllowed(r *http.Request, allowed []string) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || slices.Contains(allowed, origin) || slices.Contains(allowed, "*") {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	return arrivedOnLoopback(r) && isLoopbackHost(u.Hostname())
}

// hostAllowed reports whether the Host header names this server: any host when the operator
// listed none (go-sdk itself refuses non-loopback Hosts on a loopback listener), else one of them.
func hostAllowed(r *http.Request, allowed []string) bool {
	if len(allowed) == 0 {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	for _, a := range allowed {
		if strings.EqualFold(a, r.Host) || strings.EqualFold(a, host) {
			return true
		}
	}
	return false
}

func arrivedOnLoopback(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	if tcp, ok := addr.(*net.TCPAddr); ok {
		return tcp.IP.IsLoopback()
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
