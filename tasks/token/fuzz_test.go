package token

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters"
)

// FuzzOpen: an id from anyone opens only as what taskgate sealed, and never panics; a native id
// opens only when a driver reads it.
func FuzzOpen(f *testing.F) {
	keys, _ := ParseKeys(NewKey("k1") + "," + NewKey("k0"))
	sealed, _ := NewSealed(keys)
	good := sealed.Issue(Claims{Tool: "echo", Ref: adapters.Ref{ID: "wf/run"}, Caller: "c", Created: time.Now(), TTL: time.Hour})
	for _, s := range []string{good, good[:len(good)/2], good + "A", "tg1.k1.", "tg1..", "", "echo:x", strings.Repeat("tg1.", 50)} {
		f.Add(s)
	}
	native := Native{Refs: refs{}}
	f.Fuzz(func(t *testing.T, id string) {
		c, err := sealed.Open(id, time.Now())
		if err == nil && (id != good || c.Tool != "echo" || c.Ref.ID != "wf/run") {
			t.Fatalf("%q opened as %+v: only the id taskgate sealed may open", id, c)
		}
		if err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrForged) && !errors.Is(err, ErrExpired) {
			t.Fatalf("%q: error %v is none of the token errors", id, err)
		}
		if _, err := native.Open(id, time.Now()); err == nil && !strings.HasPrefix(id, "echo:") {
			t.Fatalf("native %q opened although no driver reads it", id)
		}
	})
}
