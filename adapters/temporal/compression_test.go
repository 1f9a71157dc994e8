package temporal

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"

	"github.com/taskgate/taskgate/internal/testenv"
)

// encodings records the grpc-encoding of every request a connection sends.
type encodings struct {
	mu   sync.Mutex
	seen map[string]int
}

func (e *encodings) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (e *encodings) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (e *encodings) HandleConn(context.Context, stats.ConnStats)                       {}
func (e *encodings) HandleRPC(_ context.Context, s stats.RPCStats) {
	if h, ok := s.(*stats.OutHeader); ok && h.Client {
		e.mu.Lock()
		e.seen[h.Compression]++
		e.mu.Unlock()
	}
}

// TestUncompressed: the engine sends its requests without gzip, which the SDK would otherwise
// apply to every one; a connection that asks for gzip still gets it.
func TestUncompressed(t *testing.T) {
	addr := testenv.TemporalAddress(t)
	for _, tc := range []struct {
		name        string
		compression client.GrpcCompression
		want        string
	}{
		{"default", nil, ""},
		{"gzip asked for", &client.GrpcCompressionGzip{}, "gzip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			enc := &encodings{seen: map[string]int{}}
			e, err := dial(ctx, client.Options{HostPort: addr, ConnectionOptions: client.ConnectionOptions{
				GrpcCompression: tc.compression, DialOptions: []grpc.DialOption{grpc.WithStatsHandler(enc)}}}, true)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			_, err = e.Describe(ctx, Workflow("Nothing", "nothing", 0), ref("taskgate-no-such-workflow", ""))
			if err == nil {
				t.Fatal("Describe of a workflow that does not exist: no error")
			}
			enc.mu.Lock()
			defer enc.mu.Unlock()
			if len(enc.seen) != 1 || enc.seen[tc.want] == 0 {
				t.Errorf("requests by grpc-encoding %v, want all %q", enc.seen, tc.want)
			}
		})
	}
}
