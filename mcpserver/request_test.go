package mcpserver_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/taskgate/taskgate/internal/mcpclient"
	"github.com/taskgate/taskgate/mcpserver"
)

// heldObserver holds a tools/list in Request (saying so on held) until a server/discover has
// been answered, and keeps the record of every request answered.
type heldObserver struct {
	held, discovered chan struct{}
	discoveredOnce   sync.Once
	observed
}

func (o *heldObserver) Request(ctx context.Context, r *mcpserver.Request) context.Context {
	if r.Method == "tools/list" {
		close(o.held)
		select {
		case <-o.discovered:
		case <-time.After(10 * time.Second): // the test fails on the records below
		}
	}
	return ctx
}

func (o *heldObserver) Answered(ctx context.Context, r *mcpserver.Request) {
	o.observed.Answered(ctx, r)
	if r.Method == "server/discover" {
		o.discoveredOnce.Do(func() { close(o.discovered) })
	}
}

// TestStdioRequestsKeepTheirOwnState: requests in flight at once on one stdio connection each
// keep what the middleware read of them: a request of a client with the tasks extension, held
// while another client's request without it is served, is still recorded as speaking the
// extension, and the other as speaking none.
func TestStdioRequestsKeepTheirOwnState(t *testing.T) {
	obs := &heldObserver{held: make(chan struct{}), discovered: make(chan struct{})}
	e := newMemEnv(t, func(c *mcpserver.Config) { c.Observer = obs })
	conn := stdioOf(t, e.srv)

	listed := make(chan error, 1)
	go func() {
		_, rpcErr, err := mcpclient.Modern(conn, ext).Call(t.Context(), "tools/list", nil)
		if rpcErr != nil {
			err = rpcErr
		}
		listed <- err
	}()
	<-obs.held
	// Another client on the same connection: its ids must not meet the first one's.
	id, params, header := mcpclient.Modern(conn).Request("server/discover", nil)
	if _, rpcErr, err := conn.RoundTrip(t.Context(), id+1000, "server/discover", params, header); err != nil || rpcErr != nil {
		t.Fatalf("server/discover: %v %v", err, rpcErr)
	}
	if err := <-listed; err != nil {
		t.Fatalf("tools/list: %v", err)
	}

	obs.mu.Lock()
	defer obs.mu.Unlock()
	dialects := map[string]string{}
	for _, r := range obs.seen {
		dialects[r.Method] = r.Dialect
	}
	if dialects["server/discover"] != "none" || dialects["tools/list"] != "extension" || len(obs.seen) != 2 {
		t.Fatalf("records %+v, want the server/discover as none and the held tools/list as extension", obs.seen)
	}
}
