package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/taskgate/taskgate/mapping"
)

// ErrNoSamples: the tool's engine cannot read the inputs of recent executions (its driver is no
// adapters.Sampler).
var ErrNoSamples = errors.New("the engine cannot read the inputs of recent executions")

// Samples reads the inputs of at most n of the latest executions of the tool's target, whoever
// started them, within its engine block's read budget: it waits for the tokens of a listing and
// n reads, the most it may make, and takes no turn ahead of a client's read. No client waits on
// it, so it is not charged to one.
func (s *Service) Samples(ctx context.Context, tool *mapping.Tool, n int) ([]json.RawMessage, error) {
	sm, ok := s.samplers[tool.Engine]
	if !ok {
		return nil, fmt.Errorf("engine %q: %w", tool.Engine, ErrNoSamples)
	}
	if b, ok := s.budgets[tool.Engine]; ok {
		if err := b.Spend(ctx, 1+n); err != nil {
			return nil, fmt.Errorf("engine %q: waiting for the read budget: %w", tool.Engine, err)
		}
	}
	return sm.Samples(ctx, tool.Target, n)
}
