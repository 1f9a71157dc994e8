package main

import (
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/taskgate/taskgate/test/faults"
)

// engineVars name the engines' addresses, as host:port or as a URL.
var engineVars = []string{"TEMPORAL_ADDRESS", "SFN_ENDPOINT", "RESTATE_INGRESS_URL", "RESTATE_ADMIN_URL"}

// atDistance puts the engines as far away as a network between a deployment and its engines: a
// TCP proxy (test/faults) that delays every byte by latency each way stands between each engine
// and everything the bench runs (its direct clients, the taskgate children, the worker), which
// find it through the environment variables the engines are named by. Direct and taskgate reads
// cross it alike. stop closes the proxies.
func atDistance(latency time.Duration) (stop func(), err error) {
	var proxies []*faults.Proxy
	stop = func() {
		for _, p := range proxies {
			p.Close()
		}
	}
	for _, name := range engineVars {
		value := os.Getenv(name)
		if value == "" {
			continue
		}
		u, err := url.Parse(value)
		hostPort := value
		if err == nil && u.Host != "" {
			hostPort = u.Host
		}
		p, err := faults.Listen(hostPort)
		if err != nil {
			stop()
			return nil, fmt.Errorf("a proxy in front of %s (%s): %w", name, value, err)
		}
		p.Set(faults.Faults{Latency: latency})
		proxies = append(proxies, p)
		if u != nil && u.Host != "" {
			u.Host = p.Addr()
			os.Setenv(name, u.String())
		} else {
			os.Setenv(name, p.Addr())
		}
	}
	return stop, nil
}
