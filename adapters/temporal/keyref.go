package temporal

import "github.com/taskgate/taskgate/adapters/driver"

// KeyRef returns the workflow id Start uses for key, with no run id: Describe then reads the latest
// run. A target that is not a workflow has no key's workflow: its KeyRef is empty and reads as not
// found.
func (e *conn) KeyRef(t driver.Target, key, caller string) driver.Ref {
	w, err := workflowOf(t)
	if err != nil {
		return driver.Ref{}
	}
	return ref(keyWorkflowID(w, key, caller), "")
}
