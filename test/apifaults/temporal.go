package apifaults

import (
	"fmt"
	"net"
	"path"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// Temporal is a gRPC proxy in front of a Temporal frontend. It passes every unary call through as
// it came (the frontend's services are unary), metadata, headers and trailers included.
type Temporal struct {
	srv       *grpc.Server
	conn      *grpc.ClientConn
	addr      string
	throttle  throttler
	calls     counts
	throttled counts
}

// NewTemporal serves a proxy to the Temporal frontend at target (host:port) on a loopback port of
// its own, until Close.
func NewTemporal(target string) (*Temporal, error) {
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
	if err != nil {
		return nil, fmt.Errorf("apifaults: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		conn.Close()
		return nil, err
	}
	p := &Temporal{conn: conn, addr: ln.Addr().String()}
	p.srv = grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.UnknownServiceHandler(p.forward))
	go p.srv.Serve(ln)
	return p, nil
}

// Address returns the proxy's host:port, for the SDK's HostPort.
func (p *Temporal) Address() string { return p.addr }

// Close stops the proxy, cutting the calls in flight.
func (p *Temporal) Close() error {
	p.srv.Stop()
	return p.conn.Close()
}

// Throttle answers fraction (0 to 1) of the calls of methods (short names, like
// DescribeWorkflowExecution; all methods when none are named) with ResourceExhausted and the cause
// RPS_LIMIT, as the frontend answers a namespace over its rate limit, from now on.
func (p *Temporal) Throttle(fraction float64, methods ...string) { p.throttle.set(fraction, methods) }

// Calls counts the calls of method (its short name) that reached the proxy, throttled ones
// included.
func (p *Temporal) Calls(method string) int64 { return p.calls.get(method) }

// AllCalls counts the calls that reached the proxy, by method.
func (p *Temporal) AllCalls() map[string]int64 { return p.calls.all() }

// Throttled counts the calls of method the proxy answered with ResourceExhausted.
func (p *Temporal) Throttled(method string) int64 { return p.throttled.get(method) }

func (p *Temporal) forward(_ any, stream grpc.ServerStream) error {
	full, ok := grpc.MethodFromServerStream(stream)
	if !ok {
		return fmt.Errorf("apifaults: a call without a method")
	}
	method := path.Base(full)
	p.calls.add(method)
	var in frame
	if err := stream.RecvMsg(&in); err != nil {
		return err
	}
	if p.throttle.throttle(method) {
		p.throttled.add(method)
		return serviceerror.ToStatus(serviceerror.NewResourceExhausted(enumspb.RESOURCE_EXHAUSTED_CAUSE_RPS_LIMIT, "namespace rate limit exceeded")).Err()
	}
	ctx := stream.Context()
	md, _ := metadata.FromIncomingContext(ctx)
	ctx = metadata.NewOutgoingContext(ctx, md.Copy())
	var out frame
	var header, trailer metadata.MD
	err := p.conn.Invoke(ctx, full, &in, &out, grpc.Header(&header), grpc.Trailer(&trailer))
	stream.SetTrailer(trailer)
	if err != nil {
		return err
	}
	if err := stream.SendHeader(header); err != nil {
		return err
	}
	return stream.SendMsg(&out)
}

// frame is one message as bytes, passed on undecoded.
type frame struct{ b []byte }

// rawCodec moves frames as they are.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, fmt.Errorf("apifaults: cannot send %T", v)
	}
	return f.b, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return fmt.Errorf("apifaults: cannot receive into %T", v)
	}
	f.b = append(f.b[:0], data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }
