package restate

import (
	"math/big"
	"strings"

	"github.com/taskgate/taskgate/adapters/driver"
)

// A Ref's ID is "SERVICE/HANDLER/TASK-KEY/INVOCATION-ID": the target, the task's key and Restate's
// invocation id. The task key is "<caller tag>-<uuid>", or "<caller tag>-k-<32 hex>" (from the
// SHA-256 of the idempotency key) for a keyed start: a service's invocations carry it as their
// idempotency key, a workflow's or virtual object's as their key. Restate chooses invocation ids,
// so it is the task key that lets Owns tell a target's and a caller's invocations from any other
// without a call, and every read checks that the invocation it finds carries it. Only KeyRef
// leaves the invocation id empty ("SERVICE/HANDLER/TASK-KEY/"): the invocation is then found by
// its task key.

// parsed is a Ref read into its parts.
type parsed struct {
	service, handler, key, invocation string
}

// base62 is the alphabet of Restate's ids.
const base62 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// validInvocation reports whether s is an invocation id Restate would read, like
// inv_1gdJBtdVEcM942bjcDmb1c1khoaJe11Hbz: "inv_", the scheme version 1, a partition key (a 64-bit
// number in 11 base62 digits) and a ULID (a 128-bit number in 22). The admin API answers a query
// with another id with an error, not with no rows.
func validInvocation(s string) bool {
	digits, ok := strings.CutPrefix(s, "inv_1")
	return ok && len(digits) == 33 && fitsBits(digits[:11], 64) && fitsBits(digits[11:], 128)
}

// fitsBits reports whether base62 digits write a number of at most bits bits.
func fitsBits(digits string, bits int) bool {
	n := new(big.Int)
	for i := 0; i < len(digits); i++ {
		d := strings.IndexByte(base62, digits[i])
		if d < 0 {
			return false
		}
		n.Mul(n, big.NewInt(62)).Add(n, big.NewInt(int64(d)))
	}
	return n.BitLen() <= bits
}

// parseRef reads a Ref's parts and checks each one's shape; the invocation id may be empty.
func parseRef(r driver.Ref) (parsed, bool) {
	parts := strings.Split(r.ID, "/")
	if len(parts) != 4 {
		return parsed{}, false
	}
	p := parsed{service: parts[0], handler: parts[1], key: parts[2], invocation: parts[3]}
	ok := nameRE.MatchString(p.service) && nameRE.MatchString(p.handler) && validTaskKey(p.key) &&
		(p.invocation == "" || validInvocation(p.invocation))
	return p, ok
}

// ref writes a Ref of a task of h.
func ref(h handler, key, invocation string) driver.Ref {
	return driver.Ref{ID: h.service + "/" + h.handler + "/" + key + "/" + invocation}
}

const keyedPart = "k-"

// taskKey is the key of a new task: fresh without an idempotency key, else derived from it and
// the caller (driver.ScopedKey), so that the same key from the same caller names the same task.
func taskKey(key, caller string) string {
	tag := driver.CallerTag(caller) + "-"
	if key == "" {
		return tag + driver.NewSuffix(caller)
	}
	return tag + driver.KeySuffix(key, caller, keyedPart, 32)
}

// validTaskKey reports whether k has a shape taskKey gives, for any caller: a caller tag (16
// characters of base64url), "-", and a UUID or "k-" and 32 hex digits.
func validTaskKey(k string) bool {
	n := len(driver.CallerTag(""))
	if len(k) <= n || k[n] != '-' || strings.ContainsFunc(k[:n], notBase64URL) {
		return false
	}
	return driver.StartedSuffix(k[n+1:], keyedPart, 32)
}

func notBase64URL(c rune) bool {
	return !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_')
}

// Owns reports whether r is shaped like a Ref Start gives for t and caller: t's service and
// handler, a task key with the caller's tag, and an invocation id.
func (e *conn) Owns(t driver.Target, r driver.Ref, caller string) bool {
	h, err := handlerOf(t)
	p, ok := parseRef(r)
	return err == nil && ok && p.invocation != "" && p.service == h.service && p.handler == h.handler &&
		strings.HasPrefix(p.key, driver.CallerTag(caller)+"-")
}

// KeyRef returns the Ref of the task Start gives for key and caller, with no invocation id: reads
// find the invocation by its task key. A target that is no Restate handler has none: its KeyRef is
// empty and reads as not found.
func (e *conn) KeyRef(t driver.Target, key, caller string) driver.Ref {
	h, err := handlerOf(t)
	if err != nil {
		return driver.Ref{}
	}
	return ref(h, taskKey(key, caller), "")
}
