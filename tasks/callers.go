package tasks

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"sync"

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
	// tags are a pool of *tagging for each MAC key, by generation: the first one records new
	// executions. Every read of a task computes its caller again.
	tags []*sync.Pool
}

// tagging computes caller tags under one key without allocating: its MAC, and the bytes it is
// fed and writes.
type tagging struct {
	mac hash.Hash
	in  []byte
	sum [sha256.Size]byte
	tag [callerLen]byte
}

// callerLen is the length of a caller: 16 bytes of MAC in unpadded base64url.
const callerLen = 22

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
		key := m.Sum(nil)
		c.tags = append(c.tags, &sync.Pool{New: func() any { return &tagging{mac: hmac.New(sha256.New, key)} }})
	}
	return c
}

// generations is how many keys recognise executions.
func (c callers) generations() int { return len(c.tags) }

// of is the caller that principal's executions of tool are recorded under in generation gen.
func (c callers) of(principal, tool string, gen int) string {
	t := c.tagged(principal, tool, gen)
	defer c.tags[gen].Put(t)
	return string(t.tag[:])
}

// is reports whether caller is the one principal's executions of tool are recorded under in
// generation gen, computing it with no allocation.
func (c callers) is(caller, principal, tool string, gen int) bool {
	t := c.tagged(principal, tool, gen)
	defer c.tags[gen].Put(t)
	return caller == string(t.tag[:])
}

// tagged computes the caller of principal and tool in generation gen into a tagging of the pool,
// which the caller puts back.
func (c callers) tagged(principal, tool string, gen int) *tagging {
	t := c.tags[gen].Get().(*tagging)
	t.in = append(append(append(t.in[:0], principal...), 0), tool...)
	t.mac.Reset()
	t.mac.Write(t.in)
	base64.RawURLEncoding.Encode(t.tag[:], t.mac.Sum(t.sum[:0])[:16])
	return t
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
