package stepfunctions_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
	"github.com/taskgate/taskgate/internal/testenv"
)

// TestAccountNamesTheQuota: STS says which account the engine's calls are made as (moto's STS, on
// the endpoint's port): the role's it assumes, whatever its ARN's text names, else its own
// credentials'.
func TestAccountNamesTheQuota(t *testing.T) {
	endpoint := testenv.SFNEndpoint(t)
	t.Setenv("AWS_ENDPOINT_URL_STS", endpoint)
	for _, c := range []struct{ role, want string }{
		{"arn:aws:iam::210987654321:role/pipelines", "aws:210987654321:eu-west-1"},
		// moto assumes a role of a partition it does not know as the caller's own account.
		{"arn:aws-probe:iam::210987654321:role/pipelines", "aws:123456789012:eu-west-1"},
		{"", "aws:123456789012:eu-west-1"}, // moto's account
	} {
		e, err := stepfunctions.New(t.Context(), stepfunctions.Config{Region: "eu-west-1", Endpoint: endpoint, RoleARN: c.role})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := e.(driver.Accounted).Account(t.Context()); err != nil || got != c.want {
			t.Errorf("Account with role %q: %q, %v; want %q", c.role, got, err, c.want)
		}
	}
	t.Setenv("AWS_ENDPOINT_URL_STS", "http://127.0.0.1:1")
	for role, want := range map[string]string{
		"": "asking STS which account the credentials are of: ",
		"arn:aws:iam::210987654321:role/pipelines": "asking STS which account role arn:aws:iam::210987654321:role/pipelines is of, as that role: ",
	} {
		e, err := stepfunctions.New(t.Context(), stepfunctions.Config{Region: "eu-west-1", Endpoint: endpoint, RoleARN: role})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second) // as long as the start waits, about
		defer cancel()
		if got, err := e.(driver.Accounted).Account(ctx); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Account with role %q and STS unreachable: %q, %v; want an error saying %q", role, got, err, want)
		}
	}
}
