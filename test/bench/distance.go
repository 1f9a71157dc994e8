package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/taskgate/taskgate/test/faults"
)

// engineVars name the engines' addresses, as host:port or as a URL.
var engineVars = []string{"TEMPORAL_ADDRESS", "SFN_ENDPOINT", "RESTATE_INGRESS_URL", "RESTATE_ADMIN_URL"}

// proxiesEnv, when set, makes this binary the bench's proxy process (see proxiesMain); it holds a
// proxySpec.
const proxiesEnv = "TASKGATE_BENCH_PROXIES"

// proxySpec is what the proxy process serves: one proxy per target (host:port), each delaying
// every byte by Latency each way.
type proxySpec struct {
	Latency time.Duration
	Targets []string
}

// atDistance puts the engines as far away as a network between a deployment and its engines: a
// TCP proxy (test/faults) that delays every byte by latency each way stands between each engine
// and everything the bench runs (its direct clients, the taskgate children, the worker), which
// find it through the environment variables the engines are named by. Direct and taskgate calls
// cross it alike. The proxies run in a process of their own, as a network is outside both ends:
// inside the bench, a proxy would hand the bench's direct calls their answers without waking any
// other process, and taskgate's only by waking the bench. stop ends that process.
func atDistance(latency time.Duration) (stop func(), err error) {
	var spec proxySpec
	var names []string
	var urls []*url.URL
	for _, name := range engineVars {
		value := os.Getenv(name)
		if value == "" {
			continue
		}
		u, err := url.Parse(value)
		if err != nil || u.Host == "" {
			u = nil
		}
		hostPort := value
		if u != nil {
			hostPort = u.Host
		}
		spec.Targets = append(spec.Targets, hostPort)
		names, urls = append(names, name), append(urls, u)
	}
	spec.Latency = latency
	addrs, stop, err := startProxies(spec)
	if err != nil {
		return nil, err
	}
	for i, name := range names {
		if u := urls[i]; u != nil {
			u.Host = addrs[i]
			os.Setenv(name, u.String())
		} else {
			os.Setenv(name, addrs[i])
		}
	}
	return stop, nil
}

// startProxies starts the proxy process and returns the proxies' addresses, in the targets'
// order.
func startProxies(spec proxySpec) (addrs []string, stop func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	b, _ := json.Marshal(spec)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), proxiesEnv+"="+string(b))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("the proxy process: %w", err)
	}
	stop = func() {
		stdin.Close()
		cmd.Wait()
	}
	lines := bufio.NewScanner(stdout)
	for range spec.Targets {
		if !lines.Scan() {
			stop()
			return nil, nil, fmt.Errorf("the proxy process ended before it named its proxies (its error is above)")
		}
		addrs = append(addrs, strings.TrimSpace(lines.Text()))
	}
	return addrs, stop, nil
}

// proxiesMain serves the proxies of spec (a proxySpec): it writes their addresses to standard
// output, a line each in the targets' order, and serves them until its standard input ends,
// which it does when the bench ends, however it ends.
func proxiesMain(spec string) int {
	var s proxySpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Fprintf(os.Stderr, "bench proxies: %s: %v\n", proxiesEnv, err)
		return 2
	}
	for _, target := range s.Targets {
		p, err := faults.Listen(target)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench proxies: a proxy in front of %s: %v\n", target, err)
			return 1
		}
		defer p.Close()
		p.Set(faults.Faults{Latency: s.Latency})
		fmt.Println(p.Addr())
	}
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// asHelper runs this binary as one of the bench's helper processes, a taskgate child or the
// proxies, when its environment names one; ok is false when it names none.
func asHelper() (code int, ok bool) {
	if spec := os.Getenv(childEnv); spec != "" {
		return childMain(spec), true
	}
	if spec := os.Getenv(proxiesEnv); spec != "" {
		return proxiesMain(spec), true
	}
	return 0, false
}
