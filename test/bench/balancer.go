package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taskgate/taskgate/internal/mcpclient"
)

// balancer is the round-robin load balancer in front of the replicas of the fleet-platform figure,
// as a team runs taskgate: every request goes to the next replica in turn (starts, tasks/get), and
// a subscriptions/listen, one long POST whose answer streams, stays on the replica it opened on
// for as long as it lasts. It balances on the client's side, as a service mesh's sidecar or
// gRPC's round_robin does: each request is sent straight to its replica, so that the load
// generator, which shares the machine with the replicas and the engines, does not pay for every
// request twice (once served, once proxied) as an in-process reverse proxy did. It also tells
// which polls asked a replica about a task it had never been asked about (no start, poll or
// listen naming the task reached it before): their latency, from the request's sending to the
// end of its answer, is what a client pays for round-robin.
type balancer struct {
	// url is the MCP endpoint its clients are given: any replica's, as each request is sent to
	// the next one whatever it names.
	url       string
	replicas  []*url.URL
	transport http.RoundTripper
	next      atomic.Uint64
	// served counts the requests sent to each replica.
	served []atomic.Int64

	mu sync.Mutex
	// known are the replicas (a bit each) that a request naming the task reached, by task id.
	known map[string]uint64
	// recording: the polls of unread tasks are kept.
	recording bool
	unread    []unreadPoll
}

// unreadPoll is a poll of a task that its replica had not read, and its latency (s).
type unreadPoll struct {
	task    string
	latency float64
}

// taskIDInAnswer finds the task id in a start's answer (JSON or an event stream).
var taskIDInAnswer = regexp.MustCompile(`"taskId"\s*:\s*"([^"]+)"`)

// newBalancer balances over the replicas' MCP endpoints.
func newBalancer(endpoints []string) (*balancer, error) {
	lb := &balancer{url: endpoints[0], known: map[string]uint64{}, served: make([]atomic.Int64, len(endpoints)),
		// Enough idle connections to every replica for all the clients' requests in flight.
		transport: &http.Transport{MaxIdleConns: 4096, MaxIdleConnsPerHost: 1024, IdleConnTimeout: 30 * time.Second, DisableCompression: true}}
	for _, ep := range endpoints {
		target, err := url.Parse(ep)
		if err != nil {
			return nil, err
		}
		lb.replicas = append(lb.replicas, target)
	}
	return lb, nil
}

// record starts or stops keeping the latencies of polls of unread tasks.
func (lb *balancer) record(on bool) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	lb.recording = on
}

// unreadPolls are the polls of unread tasks kept so far.
func (lb *balancer) unreadPolls() []unreadPoll {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return slices.Clone(lb.unread)
}

// mark notes that a request naming task reached replica i, and reports whether it is the first.
func (lb *balancer) mark(task string, i int) bool {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	bit := uint64(1) << i
	first := lb.known[task]&bit == 0
	lb.known[task] |= bit
	return first
}

// RoundTrip sends r to the next replica.
func (lb *balancer) RoundTrip(r *http.Request) (*http.Response, error) {
	i := int((lb.next.Add(1) - 1) % uint64(len(lb.replicas)))
	lb.served[i].Add(1)
	out := r.Clone(r.Context())
	out.URL.Scheme, out.URL.Host, out.URL.Path, out.Host = lb.replicas[i].Scheme, lb.replicas[i].Host, lb.replicas[i].Path, ""
	switch r.Header.Get("Mcp-Method") {
	case "tasks/get":
		if task := r.Header.Get("Mcp-Name"); task != "" && lb.mark(task, i) {
			t0 := time.Now()
			resp, _, err := lb.whole(out)
			lb.mu.Lock()
			if lb.recording {
				lb.unread = append(lb.unread, unreadPoll{task, time.Since(t0).Seconds()})
			}
			lb.mu.Unlock()
			return resp, err
		}
	case "tools/call":
		resp, body, err := lb.whole(out)
		if err == nil {
			if m := taskIDInAnswer.FindSubmatch(body); m != nil {
				lb.mark(string(m[1]), i)
			}
		}
		return resp, err
	case "subscriptions/listen":
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		out.Body = io.NopCloser(bytes.NewReader(body))
		var req struct {
			Params struct {
				Notifications struct {
					TaskIDs []string `json:"taskIds"`
				} `json:"notifications"`
			} `json:"params"`
		}
		json.Unmarshal(body, &req)
		for _, task := range req.Params.Notifications.TaskIDs {
			lb.mark(task, i)
		}
	}
	return lb.transport.RoundTrip(out)
}

// whole sends r and reads its whole answer before it returns it (and its body): the latency of a
// poll is until its last byte.
func (lb *balancer) whole(r *http.Request) (*http.Response, []byte, error) {
	resp, err := lb.transport.RoundTrip(r)
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, body, nil
}

// modern is a 2026-07-28 client of the replicas through the balancer.
func (lb *balancer) modern() *mcpclient.Client {
	return mcpclient.Modern(mcpclient.HTTP{URL: lb.url, Client: &http.Client{Transport: lb}}, extTasks)
}
