package temporal

import "github.com/taskgate/taskgate/adapters"

// KeyRef is the workflow id Start uses for key, with no run id: Describe then reads the latest run.
func (e *Engine) KeyRef(t adapters.Target, key, caller string) adapters.Ref {
	return adapters.Ref{ID: keyWorkflowID(t, key, caller)}
}
