package stepfunctions

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/taskgate/taskgate/adapters"
)

var _ adapters.Permissioner = Driver{}

// Permissions writes the IAM policies of the engines: the one of taskgate's own identity, and one
// per role an engine block assumes.
func (Driver) Permissions(uses []adapters.EngineUse) ([]byte, error) {
	var accesses []Access
	for _, u := range uses {
		c, ok := u.Config.(Config)
		if !ok {
			return nil, fmt.Errorf("engine %q: not a Step Functions engine block", u.Name)
		}
		a := Access{RoleARN: c.RoleARN, HumanInput: u.HumanInput}
		for _, t := range u.Targets {
			if slices.Contains(u.SyncOnly, t.Name) {
				a.SyncExpress = append(a.SyncExpress, t.Name)
			} else {
				a.StateMachines = append(a.StateMachines, t.Name)
			}
		}
		accesses = append(accesses, a)
	}
	p, err := IAMPolicies(accesses)
	if err != nil {
		return nil, err
	}
	out := struct {
		Taskgate json.RawMessage            `json:"taskgate"`
		Roles    map[string]json.RawMessage `json:"roles,omitempty"`
	}{Taskgate: p.Caller.JSON(), Roles: map[string]json.RawMessage{}}
	for _, r := range p.Roles {
		out.Roles[r.RoleARN] = r.Policy.JSON()
	}
	return json.MarshalIndent(out, "", "  ")
}
