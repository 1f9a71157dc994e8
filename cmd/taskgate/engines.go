package main

import (
	"context"
	"fmt"

	"github.com/taskgate/taskgate/adapters"
	_ "github.com/taskgate/taskgate/adapters/builtin" // the engine kinds taskgate is built with
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/observe"
)

// connect opens every engine block of the mapping that a tool uses; with tel, its client's retries
// are counted (the task service measures and traces the engines: newTasks).
func connect(ctx context.Context, set *mapping.Set, opts adapters.OpenOptions, tel *observe.Telemetry) (map[string]adapters.Conn, error) {
	engines := map[string]adapters.Conn{}
	for _, t := range set.Tools {
		if _, done := engines[t.Engine]; done {
			continue
		}
		o := opts
		if tel != nil {
			o.Retried = tel.Retried(t.Engine)
		}
		e, err := set.Engines[t.Engine].Config.Open(ctx, o)
		if err != nil {
			closeAll(engines)
			return nil, fmt.Errorf("engine %q: %w", t.Engine, err)
		}
		engines[t.Engine] = e
	}
	return engines, nil
}

func closeAll(engines map[string]adapters.Conn) {
	for _, e := range engines {
		e.Close()
	}
}
