package stepfunctions

import "github.com/taskgate/taskgate/adapters"

// KeyRef returns the execution ARN Start uses for key and caller. A target that is not a state
// machine owns no execution, so its KeyRef is empty and reads as not found.
func (e *Engine) KeyRef(t adapters.Target, key, caller string) adapters.Ref {
	m, err := machineOf(t)
	if err != nil {
		return adapters.Ref{}
	}
	return adapters.Ref{ID: m.execution(keyName(key, caller))}
}
