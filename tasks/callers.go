package tasks

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"

	"github.com/taskgate/taskgate/mapping"
)

// The caller recorded in an execution (the drivers write driver.CallerTag of it into the
// engine's id) is a MAC of the principal and the tool that started it, under a secret of the
// deployment. So an execution's id confirms no principal to anyone who can list the engine, and
// it binds the execution to its tool: a native id reads through that tool alone, and a listing
// per tool lists each execution once.
//
// The secrets rotate like token keys: the first one records new executions, and every listed one
// still recognises the executions recorded under it (its generation).

// callerDomain separates the callers' MACs from any other use of the deployment's secrets.
const callerDomain = "taskgate caller tag v1"

type callers struct {
	// keys are the MAC keys by generation; the first one records new executions.
	keys [][]byte
}

// newCallers derives the callers' keys from the deployment's secrets; with none (a deployment
// that serves only the local principal), one key that is no secret: it still binds the tool.
func newCallers(secrets [][]byte) callers {
	if len(secrets) == 0 {
		secrets = [][]byte{nil}
	}
	c := callers{}
	for _, s := range secrets {
		m := hmac.New(sha256.New, s)
		m.Write([]byte(callerDomain))
		c.keys = append(c.keys, m.Sum(nil))
	}
	return c
}

// generations is how many keys recognise executions.
func (c callers) generations() int { return len(c.keys) }

// of is the caller that principal's executions of tool are recorded under in generation gen.
func (c callers) of(principal, tool string, gen int) string {
	m := hmac.New(sha256.New, c.keys[gen])
	m.Write([]byte(principal))
	m.Write([]byte{0})
	m.Write([]byte(tool))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// current is the caller a request's new executions of tool are recorded under.
func (c callers) current(ctx context.Context, tool *mapping.Tool) string {
	return c.of(Principal(ctx), tool.Name, 0)
}

// unkeyedCaller is the caller that ids sealed before callers were keyed carry: a plain hash of
// the principal. A sealed id still opens with it (the seal names the tool); nothing records it.
func unkeyedCaller(principal string) string {
	sum := sha256.Sum256([]byte(principal))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}
