package mcpserver_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestOriginOnEveryMethod: a browser page of another origin gets 403 on every method, the
// event stream's GET and the session's DELETE too (net/http's CrossOriginProtection lets GET,
// HEAD and OPTIONS through); a page on loopback reaches a loopback listener even when the browser
// says cross-site (CrossOriginProtection trusts only origins listed one by one, port included).
func TestOriginOnEveryMethod(t *testing.T) {
	e := newEnv(t, nil)
	const refused = "Forbidden: this Origin or Host is not allowed; the operator lists the allowed ones\n"
	for _, c := range []struct {
		method, origin, site string
		want                 int
	}{
		{http.MethodGet, "https://attacker.example", "cross-site", http.StatusForbidden},
		{http.MethodDelete, "https://attacker.example", "cross-site", http.StatusForbidden},
		{http.MethodPost, "https://attacker.example", "cross-site", http.StatusForbidden},
		{http.MethodPost, "http://localhost:6274", "cross-site", http.StatusOK},
	} {
		req := modernRequest(context.Background(), e.url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "ping", "")
		req.Header.Del("Mcp-Protocol-Version")
		req.Method = c.method
		req.Header.Set("Origin", c.origin)
		req.Header.Set("Sec-Fetch-Site", c.site)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want || c.want == http.StatusForbidden && string(body) != refused {
			t.Errorf("%s from %s: HTTP %d %q, want %d", c.method, c.origin, resp.StatusCode, body, c.want)
		}
		if c.want == http.StatusOK && strings.Contains(string(body), "error") {
			t.Errorf("%s from %s: %s", c.method, c.origin, body)
		}
	}
}
