package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
)

// ErrNoSamples: the tool's engine cannot read the inputs of recent executions (its driver is no
// driver.Sampler).
var ErrNoSamples = errors.New("the engine cannot read the inputs of recent executions")

// Samples reads the inputs of at most n of the latest executions of the tool's target, whoever
// started them, within its engine block's read budget: it waits for the tokens of a listing and
// n reads, the most it may make, and takes no turn ahead of a client's read. No client waits on
// it, so it is not charged to one.
func (s *Service) Samples(ctx context.Context, tool *mapping.Tool, n int) ([]json.RawMessage, error) {
	inputs, err := s.engines[tool.Engine].Samples(ctx, tool.Target, n)
	if errors.Is(err, adapters.ErrUnsupported) {
		return nil, fmt.Errorf("engine %q: %w", tool.Engine, ErrNoSamples)
	}
	return inputs, err
}
