package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// balancer is the round-robin load balancer in front of the replicas of the fleet-platform figure,
// as a team runs taskgate: every request goes to the next replica in turn (starts, tasks/get), and
// a subscriptions/listen, one long POST whose answer streams, stays on the replica it opened on
// for as long as it lasts. It also tells which polls asked a replica about a task it had never
// been asked about (no start, poll or listen naming the task reached it before): their latency,
// from the request's arrival to the end of its answer, is what a client pays for round-robin.
type balancer struct {
	srv      *http.Server
	url      string
	replicas []*httputil.ReverseProxy
	next     atomic.Uint64
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

// newBalancer serves a balancer over the replicas' MCP endpoints on a loopback port until close.
func newBalancer(endpoints []string) (*balancer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	lb := &balancer{url: "http://" + ln.Addr().String() + "/mcp", known: map[string]uint64{},
		served: make([]atomic.Int64, len(endpoints))}
	// Enough idle connections to every replica for all the clients' requests in flight.
	tr := &http.Transport{MaxIdleConns: 4096, MaxIdleConnsPerHost: 1024, IdleConnTimeout: 30 * time.Second, DisableCompression: true}
	for i, ep := range endpoints {
		target, err := url.Parse(ep)
		if err != nil {
			ln.Close()
			return nil, err
		}
		lb.replicas = append(lb.replicas, &httputil.ReverseProxy{
			Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target); pr.Out.URL.Path = target.Path },
			Transport: tr,
			// A listen's events are flushed as they come (its answer is an event stream).
			FlushInterval: -1,
			ModifyResponse: func(resp *http.Response) error {
				if resp.Request.Header.Get("Mcp-Method") != "tools/call" {
					return nil
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				resp.Body = io.NopCloser(bytes.NewReader(body))
				if m := taskIDInAnswer.FindSubmatch(body); m != nil {
					lb.mark(string(m[1]), i)
				}
				return err
			},
			ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
				http.Error(w, "balancer: "+err.Error(), http.StatusBadGateway)
			},
		})
	}
	lb.srv = &http.Server{Handler: lb, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	go lb.srv.Serve(ln)
	return lb, nil
}

func (lb *balancer) close() { lb.srv.Close() }

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

func (lb *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := int((lb.next.Add(1) - 1) % uint64(len(lb.replicas)))
	lb.served[i].Add(1)
	switch r.Header.Get("Mcp-Method") {
	case "tasks/get":
		if task := r.Header.Get("Mcp-Name"); task != "" && lb.mark(task, i) {
			t0 := time.Now()
			lb.replicas[i].ServeHTTP(w, r)
			lb.mu.Lock()
			if lb.recording {
				lb.unread = append(lb.unread, unreadPoll{task, time.Since(t0).Seconds()})
			}
			lb.mu.Unlock()
			return
		}
	case "subscriptions/listen":
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "balancer: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
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
	lb.replicas[i].ServeHTTP(w, r)
}
