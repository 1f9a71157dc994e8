package stepfunctions

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// Account is the AWS account and region whose Step Functions quotas the engine's reads spend: the
// account its calls are made as, by one STS GetCallerIdentity (which needs no permission) with the
// engine's own credentials, the role's when it assumes one. A role ARN's text is not taken for it:
// it names an account whether or not the engine can be the role. STS is reached as the standard
// chain says (AWS_ENDPOINT_URL_STS replaces its endpoint).
func (e *conn) Account(ctx context.Context) (string, error) {
	who, err := e.identity.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return "", apiError(e.askingIdentity(), err)
	}
	return "aws:" + aws.ToString(who.Account) + ":" + e.region, nil
}

// askingIdentity says what Account asks, for its error.
func (e *conn) askingIdentity() string {
	if e.role == "" {
		return "asking STS which account the credentials are of"
	}
	return "asking STS which account role " + e.role + " is of, as that role"
}
