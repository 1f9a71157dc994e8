package stepfunctions

import "github.com/taskgate/taskgate/adapters/driver"

// KeyRef returns the execution ARN Start uses for key and caller. A target that is not a state
// machine owns no execution, so its KeyRef is empty and reads as not found.
func (e *conn) KeyRef(t driver.Target, key, caller string) driver.Ref {
	m, err := machineOf(t)
	if err != nil {
		return driver.Ref{}
	}
	return driver.Ref{ID: m.execution(keyName(key, caller))}
}
