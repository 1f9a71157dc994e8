package restate

import "context"

// Account is the Restate cluster, named by its admin API.
func (e *conn) Account(context.Context) (string, error) { return "restate:" + e.admin, nil }
