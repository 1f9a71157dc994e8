package restatewire_test

import (
	"encoding/json"
	"testing"

	"github.com/taskgate/taskgate/adapters/askwire"
	"github.com/taskgate/taskgate/adapters/restate/restatewire"
)

// The names and the state record are a wire format that deployed handlers write and read: they
// never change.
func TestWireFormat(t *testing.T) {
	for got, want := range map[string]string{
		restatewire.StateQuestions: "taskgate.questions",
		restatewire.StateProgress:  "taskgate.progress",
		restatewire.MetadataError:  "taskgate.error",
	} {
		if got != want {
			t.Errorf("a name is %q, want %q", got, want)
		}
	}
	const want = `{"invocation":"inv_1","open":[{"key":"approve","message":"Deploy?","schema":{"type":"object"},"awakeable":"sign_1"},{"key":"k","message":"m","schema":{}}]}`
	qs := restatewire.Questions{Invocation: "inv_1", Open: []restatewire.Question{
		{Question: askwire.Question{Key: "approve", Message: "Deploy?", Schema: json.RawMessage(`{"type":"object"}`)}, Awakeable: "sign_1"},
		{Question: askwire.Question{Key: "k", Message: "m", Schema: json.RawMessage(`{}`)}},
	}}
	if b, err := json.Marshal(qs); err != nil || string(b) != want {
		t.Errorf("the state record: %s %v, want %s", b, err, want)
	}
	var back restatewire.Questions
	if err := json.Unmarshal([]byte(want), &back); err != nil || back.Invocation != "inv_1" || len(back.Open) != 2 ||
		back.Open[0].Key != "approve" || back.Open[0].Awakeable != "sign_1" || string(back.Open[0].Schema) != `{"type":"object"}` {
		t.Errorf("decoding the state record: %+v %v", back, err)
	}
	if a := back.Open[0].Asked(); a.Key != "approve" || a.Message != "Deploy?" {
		t.Errorf("Asked: %+v", a)
	}
}
