package tasks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"testing"
)

// A caller is what the engines keep in their ids: its form may never change, and a read checks it
// without allocating, since every poll does.
func TestCallersAreStable(t *testing.T) {
	c := newCallers([][]byte{[]byte("first"), []byte("second")})
	for gen, secret := range []string{"first", "second"} {
		key := hmac.New(sha256.New, []byte(secret))
		key.Write([]byte(callerDomain))
		m := hmac.New(sha256.New, key.Sum(nil))
		m.Write([]byte("alice\x00deploy"))
		want := base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
		if got := c.of("alice", "deploy", gen); got != want {
			t.Errorf("generation %d: caller %q, want %q", gen, got, want)
		}
		if !c.is(want, "alice", "deploy", gen) || c.is(want, "alice", "deploy2", gen) || c.is(want, "bob", "deploy", gen) {
			t.Errorf("generation %d: is does not tell alice's deploy from the others", gen)
		}
	}
	caller := c.of("alice", "deploy", 0)
	if n := testing.AllocsPerRun(100, func() { c.is(caller, "alice", "deploy", 0) }); n != 0 {
		t.Errorf("is allocates %v times, want none", n)
	}
}
