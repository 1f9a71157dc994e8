package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// front is a round-robin HTTP load balancer, as a cloud's or a Kubernetes service's: each request
// goes to the next replica, so that a client's consecutive requests land on different ones. A
// replica that refuses the connection (it is down) is skipped, as load balancers retry a request
// that never reached a backend; a request cut after it reached one is answered 502, since it may
// have been served.
type front struct {
	backends []string // host:port
	next     atomic.Uint64
	client   *http.Client
}

func newFront(backends []string) *front {
	return &front{backends: backends, client: &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: 512,
		IdleConnTimeout:     30 * time.Second,
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
	}}}
}

// maxBody bounds what the front reads of a request, which it keeps to send to another replica.
const maxBody = 4 << 20

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		http.Error(w, "front: reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	var lastErr error
	for range f.backends {
		backend := f.backends[f.next.Add(1)%uint64(len(f.backends))]
		out, _ := http.NewRequestWithContext(r.Context(), r.Method, "http://"+backend+r.URL.RequestURI(), bytes.NewReader(body))
		out.Header = r.Header.Clone()
		resp, err := f.client.Do(out)
		if err != nil {
			lastErr = err
			if refused(err) {
				continue
			}
			http.Error(w, fmt.Sprintf("front: %s: %v", backend, err), http.StatusBadGateway)
			return
		}
		relay(w, resp)
		return
	}
	http.Error(w, fmt.Sprintf("front: no replica answers: %v", lastErr), http.StatusServiceUnavailable)
}

// refused reports whether the request never reached a backend.
func refused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// relay copies a backend's answer, flushing as it goes: event streams arrive as they are written.
// An answer cut short is cut short for the client too.
func relay(w http.ResponseWriter, resp *http.Response) {
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			// The replica went away mid-answer: the client's connection breaks too.
			panic(http.ErrAbortHandler)
		}
	}
}
