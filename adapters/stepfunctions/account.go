package stepfunctions

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// Account is the AWS account and region whose Step Functions quotas the engine's reads spend:
// the account of the role it assumes, with no call; else whose credentials it has, by one STS
// GetCallerIdentity (which needs no permission). STS is reached as the standard chain says
// (AWS_ENDPOINT_URL_STS replaces its endpoint).
func (e *Engine) Account(ctx context.Context) (string, error) {
	account := e.account
	if account == "" {
		who, err := e.identity.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
		if err != nil {
			return "", apiError("asking STS which account the credentials are of", err)
		}
		account = aws.ToString(who.Account)
	}
	return "aws:" + account + ":" + e.region, nil
}

// roleAccount is the account of an IAM role ARN (arn:aws:iam::123456789012:role/NAME), else "".
func roleAccount(role string) string {
	if p := strings.Split(role, ":"); len(p) >= 6 && p[0] == "arn" && p[2] == "iam" {
		return p[4]
	}
	return ""
}
