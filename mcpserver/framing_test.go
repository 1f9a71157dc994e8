package mcpserver_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskgate/taskgate/mcpserver"
)

// framedServer serves, behind GuardFraming, a handler that answers each request with its method,
// path and body.
func framedServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.Path, body)
	})}
	go hs.Serve(mcpserver.GuardFraming(hs, ln))
	t.Cleanup(func() { hs.Close() })
	return ln.Addr().String()
}

// rawExchange writes raw to a new connection to addr and reads the answers until the server closes
// it or goes quiet: each answer's status and body, and whether the server closed the connection.
func rawExchange(t *testing.T, addr, raw string) (answers []string, closed bool) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(time.Second))
	r := bufio.NewReader(conn)
	for {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			// ReadResponse reads the end of the connection as an unexpected one; closed with the
			// tail unread, the connection may be reset instead.
			return answers, errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
		}
		body, _ := io.ReadAll(resp.Body)
		answers = append(answers, fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body))))
	}
}

func TestGuardFraming(t *testing.T) {
	addr := framedServer(t)
	const next = "GET /next HTTP/1.1\r\nHost: x\r\n\r\n"
	for _, tc := range []struct {
		name, raw string
		want      []string
		closed    bool
	}{
		{"Content-Length, then another request", "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" + next,
			[]string{"200 POST /a hello", "200 GET /next"}, false},
		{"chunked with an extension and a trailer, then another request",
			"POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n1\r\n!\r\n0\r\nT: 1\r\n\r\n" + next,
			[]string{"200 POST /a hello!", "200 GET /next"}, false},
		{"a body with line ends in it", "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 13\r\n\r\nTransfer-\r\n\r\n" + next,
			[]string{"200 POST /a Transfer-", "200 GET /next"}, false},
		{"both, the tail a request of its own",
			"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + next,
			[]string{"400 Bad Request: the request has both Transfer-Encoding and Content-Length (RFC 9112 §6.3)"}, true},
		{"both, in other cases and order, after a good request",
			"GET /first HTTP/1.1\r\nHost: x\r\n\r\nPOST /a HTTP/1.1\r\nHost: x\r\ntransfer-encoding: chunked\r\ncontent-length: 3\r\n\r\n0\r\n\r\n" + next,
			[]string{"200 GET /first", "400 Bad Request: the request has both Transfer-Encoding and Content-Length (RFC 9112 §6.3)"}, true},
		{"OPTIONS * with both", "OPTIONS * HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + next,
			[]string{"400 Bad Request: the request has both Transfer-Encoding and Content-Length (RFC 9112 §6.3)"}, true},
	} {
		answers, closed := rawExchange(t, addr, tc.raw)
		if strings.Join(answers, "|") != strings.Join(tc.want, "|") || closed != tc.closed {
			t.Errorf("%s: answers %q, closed %v; want %q, closed %v", tc.name, answers, closed, tc.want, tc.closed)
		}
	}
}
