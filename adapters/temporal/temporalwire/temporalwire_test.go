package temporalwire_test

import (
	"encoding/json"
	"testing"

	"github.com/taskgate/taskgate/adapters/askwire"
	"github.com/taskgate/taskgate/adapters/temporal/temporalwire"
)

// The names and the memo record are a wire format that deployed workflows write and read: they
// never change.
func TestWireFormat(t *testing.T) {
	for _, n := range [][2]string{
		{temporalwire.UpdateName, "taskgate.answer"},
		{temporalwire.SignalName, "taskgate.answer"},
		{temporalwire.MemoQuestions, "taskgate.questions"},
		{temporalwire.MemoProgress, "taskgate.progress"},
		{temporalwire.NotOpenType, "taskgate.NotOpen"},
		{temporalwire.InvalidAnswerType, "taskgate.InvalidAnswer"},
		{temporalwire.ViaUpdate, "update"},
		{temporalwire.ViaSignal, "signal"},
	} {
		if n[0] != n[1] {
			t.Errorf("a name is %q, want %q", n[0], n[1])
		}
	}
	const want = `{"run":"r1","via":"signal","open":[{"key":"approve","message":"Deploy?","schema":{"type":"object"}}]}`
	qs := temporalwire.Questions{Run: "r1", Via: temporalwire.ViaSignal, Open: []askwire.Question{
		{Key: "approve", Message: "Deploy?", Schema: json.RawMessage(`{"type":"object"}`)},
	}}
	if b, err := json.Marshal(qs); err != nil || string(b) != want {
		t.Errorf("the memo record: %s %v, want %s", b, err, want)
	}
	var back temporalwire.Questions
	if err := json.Unmarshal([]byte(want), &back); err != nil || back.Run != "r1" || back.Via != "signal" || len(back.Open) != 1 || back.Open[0].Key != "approve" {
		t.Errorf("decoding the memo record: %+v %v", back, err)
	}
}
