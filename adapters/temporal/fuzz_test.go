package temporal

import (
	"strings"
	"testing"

	"github.com/taskgate/taskgate/adapters/driver"
)

// FuzzOwns: only workflow ids of the target's own workflow type, in the shapes Start gives them,
// are owned; an owned id is one the driver reads back as itself.
func FuzzOwns(f *testing.F) {
	const run = "01a22ebd-a7eb-7346-a9c9-1bfca2755fbc"
	tag := driver.CallerTag("alice")
	for _, id := range []string{"taskgate/WaitAndEcho/" + tag + "/e306e082-c85c-4ad6-ac96-c22123baa3de", "taskgate/WaitAndEcho/" + tag + "/k-" + strings.Repeat("a", 32),
		"taskgate/WaitAndEchoX/e306e082-c85c-4ad6-ac96-c22123baa3de", "taskgate/WaitAndEcho/../x", "taskgate//", ""} {
		f.Add("WaitAndEcho", id, run)
	}
	e := &conn{}
	f.Fuzz(func(t *testing.T, typ, id, runID string) {
		if !e.Owns(Workflow(typ, "q", 0), ref(id, runID), "alice") {
			return
		}
		if typ == "" || !strings.HasPrefix(id, idPrefix+typ+"/"+driver.CallerTag("alice")+"/") {
			t.Fatalf("%q owned by workflow type %q", id, typ)
		}
		r, err := (Driver{}).ParseRef((Driver{}).FormatRef(ref(id, runID)))
		if wf, run, _ := WorkflowOf(r); err != nil || wf != id || run != runID {
			t.Fatalf("%q/%q owned but read back as %v, %v", id, runID, r, err)
		}
	})
}
