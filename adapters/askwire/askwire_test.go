package askwire_test

import (
	"encoding/json"
	"testing"

	"github.com/taskgate/taskgate/adapters/askwire"
)

// The shapes are a wire format that deployed workflows write and read: their JSON never changes.
func TestWireFormat(t *testing.T) {
	for _, c := range []struct {
		name string
		v    any
		want string
	}{
		{"question", askwire.Question{Key: "approve", Message: "Deploy?", Schema: json.RawMessage(`{"type":"object"}`)},
			`{"key":"approve","message":"Deploy?","schema":{"type":"object"}}`},
		{"reply accepted", askwire.Reply{Key: "approve", Action: "accept", Content: json.RawMessage(`{"approve":true}`)},
			`{"key":"approve","action":"accept","content":{"approve":true}}`},
		{"reply without a key", askwire.Reply{Action: "decline"}, `{"action":"decline"}`},
	} {
		b, err := json.Marshal(c.v)
		if err != nil || string(b) != c.want {
			t.Errorf("%s: %s %v, want %s", c.name, b, err, c.want)
		}
	}
	var q askwire.Question
	if err := json.Unmarshal([]byte(`{"key":"k","message":"m","schema":{"type":"object"}}`), &q); err != nil ||
		q.Key != "k" || q.Message != "m" || string(q.Schema) != `{"type":"object"}` {
		t.Errorf("decoding a question: %+v %v", q, err)
	}
	if a := q.Asked(); a.Key != "k" || a.Message != "m" || string(a.Schema) != `{"type":"object"}` {
		t.Errorf("Asked: %+v", a)
	}
}

func TestAnswer(t *testing.T) {
	var v struct{ Approve bool }
	if a := (askwire.Answer{Action: "accept", Content: json.RawMessage(`{"Approve":true}`)}); !a.Accepted() || a.Decode(&v) != nil || !v.Approve {
		t.Errorf("an accepted answer: %+v", v)
	}
	if a := (askwire.Answer{Action: "decline"}); a.Accepted() || a.Decode(&v) == nil {
		t.Error("a declined answer decoded")
	}
}
