package temporal

import "github.com/taskgate/taskgate/adapters"

// KeyRef returns the workflow id Start uses for key, with no run id: Describe then reads the latest
// run. A target that is not a workflow has no key's workflow: its KeyRef is empty and reads as not
// found.
func (e *Engine) KeyRef(t adapters.Target, key, caller string) adapters.Ref {
	w, err := workflowOf(t)
	if err != nil {
		return adapters.Ref{}
	}
	return ref(keyWorkflowID(w, key, caller), "")
}
