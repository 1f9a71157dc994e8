package stepfunctions_test

import (
	"testing"

	"github.com/taskgate/taskgate/adapters/stepfunctions"
	"github.com/taskgate/taskgate/internal/testenv"
)

// TestAccountNamesTheQuota: a role names its account with no call; without one, STS says whose
// credentials they are (moto's STS, on the endpoint's port).
func TestAccountNamesTheQuota(t *testing.T) {
	endpoint := testenv.SFNEndpoint(t)
	t.Setenv("AWS_ENDPOINT_URL_STS", endpoint)
	for _, c := range []struct{ role, want string }{
		{"arn:aws:iam::210987654321:role/pipelines", "aws:210987654321:eu-west-1"},
		{"", "aws:123456789012:eu-west-1"}, // moto's account
	} {
		e, err := stepfunctions.New(t.Context(), stepfunctions.Config{Region: "eu-west-1", Endpoint: endpoint, RoleARN: c.role})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := e.Account(t.Context()); err != nil || got != c.want {
			t.Errorf("Account with role %q: %q, %v; want %q", c.role, got, err, c.want)
		}
	}
	t.Setenv("AWS_ENDPOINT_URL_STS", "http://127.0.0.1:1")
	e, err := stepfunctions.New(t.Context(), stepfunctions.Config{Region: "eu-west-1", Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := e.Account(t.Context()); err == nil {
		t.Errorf("Account with STS unreachable: %q, want an error", got)
	}
}
