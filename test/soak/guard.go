package main

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"
)

// outage is a time an engine did not answer the soak itself outside the faults it planned: the
// environment broke (an engine's process died, or something else on the machine ended it), and
// what the clients saw meanwhile says nothing about taskgate.
type outage struct {
	Engine      string  `json:"engine"`
	FromSeconds float64 `json:"fromSeconds"`
	// ToSeconds is when it answered again; 0 when it never did.
	ToSeconds float64 `json:"toSeconds,omitempty"`
}

// guard asks each engine directly every 5 s (10 s to answer; the Temporal server is not asked
// while the soak restarts it) until ctx ends, and records the outages.
func (s *soak) guard(ctx context.Context, sfnClient *sfn.Client, restarting *atomic.Bool) {
	answers := map[string]func(context.Context) bool{
		engineTemporal: func(ctx context.Context) bool { return restarting.Load() || temporalAnswers(ctx, s.temporal.addr()) },
		engineSFN: func(ctx context.Context) bool {
			_, err := sfnClient.ListStateMachines(ctx, &sfn.ListStateMachinesInput{MaxResults: 1})
			return err == nil
		},
	}
	open := map[string]int{} // engine -> its outage in s.outages while it lasts
	for sleep(ctx, 5*time.Second) {
		for engine, answer := range answers {
			callCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
			ok := answer(callCtx)
			cancel()
			if ctx.Err() != nil {
				return
			}
			at := time.Since(s.begin).Seconds()
			i, down := open[engine]
			s.mu.Lock()
			switch {
			case !ok && !down:
				open[engine] = len(s.outages)
				s.outages = append(s.outages, outage{Engine: engine, FromSeconds: at})
			case ok && down:
				s.outages[i].ToSeconds = at
				delete(open, engine)
			}
			s.mu.Unlock()
			if !ok && !down {
				s.logf("WARNING: %s does not answer the soak itself, outside any planned fault: until it does, the results say nothing about taskgate", engine)
			}
		}
	}
}
