package restate

import (
	"strings"
	"testing"

	"github.com/taskgate/taskgate/adapters/driver"
)

// FuzzOwns: only ids of the target's own service and handler, with the caller's tag and an
// invocation id, in the shapes Start gives them, are owned; an owned id is one the driver reads
// back as itself, and a read would query no other invocation than the one it names.
func FuzzOwns(f *testing.F) {
	tag := driver.CallerTag("alice")
	const inv = "inv_1dA6Hlgirudn6wCZzaVfE4dkXAWrvdo6RC"
	for _, id := range []string{
		"WaitAndEcho/run/" + tag + "-e306e082-c85c-4ad6-ac96-c22123baa3de/" + inv,
		"WaitAndEcho/run/" + tag + "-k-" + strings.Repeat("a", 32) + "/" + inv,
		"WaitAndEcho/run/" + tag + "-k-" + strings.Repeat("a", 32) + "/",
		"WaitAndEcho/run/" + driver.CallerTag("bob") + "-e306e082-c85c-4ad6-ac96-c22123baa3de/" + inv,
		"WaitAndEcho/run/" + tag + "-e306e082-c85c-4ad6-ac96-c22123baa3de/inv_1zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
		"WaitAndEcho/run/" + tag + "-x/" + inv + "' OR 1=1 --",
		"WaitAndEcho/run/../" + inv, "///", "",
	} {
		f.Add("WaitAndEcho", "run", id)
	}
	e := &conn{}
	f.Fuzz(func(t *testing.T, service, handler, id string) {
		if !e.Owns(Handler(service, handler, Cancel), driver.Ref{ID: id}, "alice") {
			return
		}
		if !strings.HasPrefix(id, service+"/"+handler+"/"+tag+"-") {
			t.Fatalf("%q owned by %s/%s", id, service, handler)
		}
		r, err := (Driver{}).ParseRef((Driver{}).FormatRef(driver.Ref{ID: id}))
		if err != nil || r.ID != id {
			t.Fatalf("%q owned but read back as %v, %v", id, r, err)
		}
		p, _ := parseRef(r)
		if !validInvocation(p.invocation) || strings.ContainsAny(p.invocation+p.key+p.service+p.handler, "'\\ ") {
			t.Fatalf("%q owned with parts a query could not hold as they are: %+v", id, p)
		}
	})
}
