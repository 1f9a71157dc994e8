package driver

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// The shape of an execution's id (a caller's tag, then a UUID or a key's hash: StartedSuffix) is no
// proof that the caller started it: anyone who was given one id can copy its tag and make up
// suffixes. So the suffix a driver writes after the tag ends with a MAC of the rest of it under the
// caller, which is itself a MAC of the principal and the tool under the deployment's secret
// (tasks): only the deployment mints suffixes, and Minted checks one with no engine call. An id
// that a client made up is refused before any read, and costs the engines nothing.

// macLen is how many bytes of the MAC a suffix carries: 64 bits, beyond any online guessing.
const macLen = 8

// NewSuffix returns the suffix of a new execution of caller started without an idempotency key:
// 8 random bytes and the MAC of them, in the form of a UUID (StartedSuffix).
func NewSuffix(caller string) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b[:8]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	copy(b[8:], suffixMAC(caller, 'n', b[:8]))
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// KeySuffix returns the suffix of the execution that caller starts with an idempotency key:
// keyed, then hexLen hex digits (at least 18), a hash of the key in caller's space (ScopedKey) and
// the MAC of it. The same key and caller always give the same suffix, so that a key is found
// again with no table.
func KeySuffix(key, caller, keyed string, hexLen int) string {
	sum := sha256.Sum256([]byte(ScopedKey(key, caller)))
	part := sum[:hexLen/2-macLen]
	return keyed + hex.EncodeToString(part) + hex.EncodeToString(suffixMAC(caller, 'k', part))
}

// suffixMAC is the MAC of part, of a suffix of kind ('n' new, 'k' keyed), under caller.
func suffixMAC(caller string, kind byte, part []byte) []byte {
	m := hmac.New(sha256.New, []byte(caller))
	m.Write([]byte{'t', 'g', 's', '1', kind})
	m.Write(part)
	return m.Sum(nil)[:macLen]
}

// Minted reports whether id names an execution that caller's start minted: somewhere in it, the
// caller's tag, one separator ('/' or '-'), and a suffix of NewSuffix or KeySuffix (with the
// keyed prefix "k-") made for caller, up to the next '/' or the end. Drivers write their ids so.
// It is the check of ids that carry nothing else a client cannot make up (native task ids); a
// sealed id carries its Ref under the deployment's key already.
func Minted(id, caller string) bool {
	tag := CallerTag(caller)
	for rest := id; ; {
		i := strings.Index(rest, tag)
		if i < 0 {
			return false
		}
		rest = rest[i+len(tag):]
		if len(rest) < 2 || rest[0] != '/' && rest[0] != '-' {
			continue
		}
		suffix, _, _ := strings.Cut(rest[1:], "/")
		if mintedSuffix(suffix, caller) {
			return true
		}
	}
}

// mintedSuffix reports whether s is a suffix NewSuffix or KeySuffix made for caller.
func mintedSuffix(s, caller string) bool {
	kind := byte('n')
	if h, ok := strings.CutPrefix(s, "k-"); ok {
		kind, s = 'k', h
	} else if !canonicalUUID(s) {
		return false
	} else {
		s = strings.ReplaceAll(s, "-", "")
	}
	b, err := hex.DecodeString(s)
	if err != nil || len(b) <= macLen || hex.EncodeToString(b) != s {
		return false
	}
	part, mac := b[:len(b)-macLen], b[len(b)-macLen:]
	return hmac.Equal(mac, suffixMAC(caller, kind, part))
}
