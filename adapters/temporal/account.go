package temporal

import "context"

// Account is the frontend's address and the namespace: the quotas of a Temporal frontend are
// per namespace.
func (e *conn) Account(context.Context) (string, error) {
	return "temporal:" + e.address + "/" + e.namespace, nil
}
