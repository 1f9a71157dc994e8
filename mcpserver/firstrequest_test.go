package mcpserver_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgate/taskgate/internal/mcpclient"
	"github.com/taskgate/taskgate/mcpserver"
)

// The timeouts of the servers below: a connection's request head must arrive within headerTimeout
// of its first bytes, and a connection waits idleTimeout for them (taskgate serve: 10 s and 60 s).
const (
	headerTimeout = 200 * time.Millisecond
	idleTimeout   = 2 * time.Second
)

// freshServer serves, on loopback, a handler that answers a JSON-RPC result {"ok": true} (to id
// 2) once its request's body is read, and holds a request with X-Hold until hold is closed.
type freshServer struct {
	url  string
	hold chan struct{}
	// held is told when a request with X-Hold arrives; closed the client address of each
	// connection the server closes.
	held   chan struct{}
	closed chan string
}

// freshConnServer starts a freshServer that waits for a connection's first request as net/http
// does, or through AwaitFirstRequest.
func freshConnServer(t *testing.T, await bool) *freshServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &freshServer{url: "http://" + ln.Addr().String() + "/mcp", hold: make(chan struct{}), held: make(chan struct{}, 1), closed: make(chan string, 16)}
	hs := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			if r.Header.Get("X-Hold") != "" {
				s.held <- struct{}{}
				<-s.hold
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":2,"result":{"ok":true}}`)
		}),
		ReadHeaderTimeout: headerTimeout, IdleTimeout: idleTimeout,
		ConnState: func(c net.Conn, state http.ConnState) {
			if state == http.StateClosed {
				s.closed <- c.RemoteAddr().String()
			}
		},
	}
	if await {
		ln = mcpserver.AwaitFirstRequest(hs, ln)
	}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return s
}

// awaitClose waits at most within for the server to close the connection whose client end is
// conn, and says how long it waited.
func (s *freshServer) awaitClose(t *testing.T, conn net.Conn, within time.Duration) time.Duration {
	t.Helper()
	start, timeout := time.Now(), time.After(within)
	for {
		select {
		case addr := <-s.closed:
			if addr == conn.LocalAddr().String() {
				return time.Since(start)
			}
		case <-timeout:
			t.Fatalf("the server did not close the connection within %s", within)
		}
	}
}

// slowReader is a client connection whose reads wait for open: the client's read loop, which
// would notice at once that the server closed the connection, is late, as on a busy machine.
type slowReader struct {
	net.Conn
	open chan struct{}
}

func (c *slowReader) Read(p []byte) (int, error) {
	<-c.open
	return c.Conn.Read(p)
}

// unusedConn gets tr an idle connection it never sent a request on, as net/http's Transport gets
// one: a request that finds no idle connection dials one, another connection frees up first and
// serves it, and the new one goes to the idle pool when its dial ends. It returns that connection,
// which reads through a slowReader.
func unusedConn(t *testing.T, s *freshServer, tr *http.Transport, release chan struct{}, dialed <-chan *slowReader) *slowReader {
	t.Helper()
	client := &http.Client{Transport: tr}
	send := func(header string) <-chan error {
		done := make(chan error, 1)
		go func() {
			req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tasks/get"}`))
			if header != "" {
				req.Header.Set(header, "1")
			}
			resp, err := client.Do(req)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			done <- err
		}()
		return done
	}
	first := send("X-Hold") // dials the first connection, and waits on the server
	select {
	case <-s.held:
	case err := <-first:
		t.Fatalf("the first request ended before the server held it: %v", err)
	}
	waiting := send("") // finds no idle connection: dials the second, which holds its dial
	second := <-dialed
	close(s.hold) // the first connection frees up, and serves the waiting request
	for _, done := range []<-chan error{first, waiting} {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	close(release) // the second dial ends, and its connection goes to the idle pool
	return second
}

// freshConnClient is a Transport that keeps idle connections for a minute, whose second dial
// connects at once but ends only once release is closed, and reads through a slowReader.
func freshConnClient() (tr *http.Transport, release chan struct{}, dialed chan *slowReader) {
	release, dialed = make(chan struct{}), make(chan *slowReader, 1)
	var dials atomic.Int32
	tr = &http.Transport{IdleConnTimeout: time.Minute, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil || dials.Add(1) != 2 {
			return c, err
		}
		s := &slowReader{Conn: c, open: make(chan struct{})}
		dialed <- s
		<-release
		return s, nil
	}}
	return tr, release, dialed
}

// A poster sends a poll through client and returns the answer's body.
type poster func(ctx context.Context, url string, client *http.Client) (string, error)

// plainPost is a poster of a plain POST, with header (if any).
func plainPost(header string) poster {
	return func(ctx context.Context, url string, client *http.Client) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tasks/get"}`))
		if header != "" {
			req.Header.Set(header, "poll-2")
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
}

// pollWithClient is a poster of tasks/get through internal/mcpclient.
func pollWithClient(ctx context.Context, url string, client *http.Client) (string, error) {
	res, _, err := mcpclient.HTTP{URL: url, Client: client}.RoundTrip(ctx, 2, "tasks/get", map[string]any{"taskId": "t"}, nil)
	return string(res), err
}

// sendOn sends a poll through tr and reports whether it went on conn (as a reused connection) and
// what it got; conn's reads open once the request is written.
func sendOn(url string, tr *http.Transport, conn *slowReader, send poster) (onConn bool, body string, err error) {
	var once sync.Once
	trace := &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if info.Conn == net.Conn(conn) && info.Reused {
				onConn = true
			}
		},
		WroteRequest: func(httptrace.WroteRequestInfo) { once.Do(func() { close(conn.open) }) },
	}
	body, err = send(httptrace.WithClientTrace(context.Background(), trace), url, &http.Client{Transport: tr})
	once.Do(func() { close(conn.open) })
	return onConn, body, err
}

// TestUnusedConnectionClosedAtHeaderTimeout shows the race the bench's fleet lost two polls to,
// step by step, with net/http's own server: a connection the client dialed but never used is
// closed by the server after ReadHeaderTimeout, though its idle timeout is ten times that; a poll
// the client sends on it before its read loop saw the close gets EOF, and net/http sends a POST
// again only when it carries an Idempotency-Key (or X-Idempotency-Key) header.
func TestUnusedConnectionClosedAtHeaderTimeout(t *testing.T) {
	for name, send := range map[string]poster{
		"POST": plainPost(""), "POST with Idempotency-Key": plainPost("Idempotency-Key"), "POST with X-Idempotency-Key": plainPost("X-Idempotency-Key"),
		"mcpclient's tasks/get": pollWithClient,
	} {
		t.Run(name, func(t *testing.T) {
			s := freshConnServer(t, false)
			tr, release, dialed := freshConnClient()
			defer tr.CloseIdleConnections()
			conn := unusedConn(t, s, tr, release, dialed)
			s.awaitClose(t, conn, idleTimeout) // after headerTimeout from the dial
			onConn, body, err := sendOn(s.url, tr, conn, send)
			if !onConn {
				t.Fatalf("the poll did not go on the unused connection (it got %q, %v)", body, err)
			}
			if name == "POST" {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("a poll on the connection the server closed: got %q, %v; want EOF", body, err)
				}
				return
			}
			if err != nil || !strings.Contains(body, `"ok":true`) {
				t.Fatalf("a poll on the connection the server closed: got %q, %v; want it sent again and answered", body, err)
			}
		})
	}
}

// TestAwaitFirstRequest: behind AwaitFirstRequest, a connection the client has not used yet stays
// open as long as an idle one, and carries the client's next poll; a connection that sends
// nothing is closed at the idle timeout, and one whose head trickles in at the header timeout from
// its first bytes.
func TestAwaitFirstRequest(t *testing.T) {
	s := freshConnServer(t, true)
	tr, release, dialed := freshConnClient()
	defer tr.CloseIdleConnections()
	conn := unusedConn(t, s, tr, release, dialed)
	time.Sleep(3 * headerTimeout)
	onConn, body, err := sendOn(s.url, tr, conn, plainPost(""))
	if !onConn || err != nil || !strings.Contains(body, `"ok":true`) {
		t.Fatalf("a poll on a connection unused for 3 header timeouts: on it %v, got %q, %v; want it answered there", onConn, body, err)
	}

	closedAfter := func(name string, write func(net.Conn), least, most time.Duration) {
		t.Helper()
		c, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(s.url, "http://"), "/mcp"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		start := time.Now()
		write(c)
		s.awaitClose(t, c, 2*most)
		if d := time.Since(start); d < least || d > most {
			t.Errorf("%s: closed after %s, want %s to %s", name, d, least, most)
		}
	}
	closedAfter("a connection that sends nothing", func(net.Conn) {}, idleTimeout-100*time.Millisecond, idleTimeout+time.Second)
	closedAfter("a head that stops after its first line", func(c net.Conn) {
		time.Sleep(3 * headerTimeout)
		io.WriteString(c, "POST /mcp HTTP/1.1\r\n")
	}, 4*headerTimeout-50*time.Millisecond, 4*headerTimeout+time.Second)
}
