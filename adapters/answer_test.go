package adapters_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/taskgate/taskgate/adapters"
)

func TestAnswerCheck(t *testing.T) {
	tests := []struct {
		a    adapters.Answer
		want string
	}{
		{adapters.Answer{Action: "accept", Content: json.RawMessage(`{"confirm":true}`)}, ""},
		{adapters.Answer{Action: "accept", Content: json.RawMessage(`{}`)}, ""},
		{adapters.Answer{Action: "decline"}, ""},
		{adapters.Answer{Action: "cancel", Content: json.RawMessage(`"ignored"`)}, ""},
		{adapters.Answer{Action: "accept"}, `invalid request: an accepted answer's content must be a JSON object, like {"confirm": true}`},
		{adapters.Answer{Action: "accept", Content: json.RawMessage(`null`)}, `invalid request: an accepted answer's content must be a JSON object, like {"confirm": true}`},
		{adapters.Answer{Action: "accept", Content: json.RawMessage(`[1]`)}, `invalid request: an accepted answer's content must be a JSON object, like {"confirm": true}`},
		{adapters.Answer{Action: "Accept"}, `invalid request: answer action "Accept": want accept, decline or cancel`},
		{adapters.Answer{}, `invalid request: answer action "": want accept, decline or cancel`},
	}
	for _, tc := range tests {
		err := tc.a.Check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v, want no error", tc.a, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want || !errors.Is(err, adapters.ErrInvalid)):
			t.Errorf("%+v: %v, want %q wrapping ErrInvalid", tc.a, err, tc.want)
		}
	}
	if adapters.InputRequired.String() != "input_required" || adapters.InputRequired.Terminal() || adapters.InputRequired != 6 {
		t.Errorf("InputRequired: %q, terminal %v, value %d", adapters.InputRequired, adapters.InputRequired.Terminal(), adapters.InputRequired)
	}
}

func TestAnswerLimit(t *testing.T) {
	limit := adapters.AnswerLimit{Engine: "Step Functions", Bytes: 256 << 10}
	if err := limit.Check(256 << 10); err != nil {
		t.Errorf("an answer of exactly the limit: %v", err)
	}
	tests := []struct {
		limit adapters.AnswerLimit
		size  int
		want  string
	}{
		{limit, 256<<10 + 1, "invalid request: the answer is 256.0 KiB; Step Functions takes answers of at most 256 KiB (262144 bytes)"},
		{limit, 3 << 20, "invalid request: the answer is 3 MiB; Step Functions takes answers of at most 256 KiB (262144 bytes)"},
		{adapters.AnswerLimit{Engine: "Temporal", Bytes: 1984 << 10}, 3<<20 + 50, "invalid request: the answer is 3.0 MiB; Temporal takes answers of at most 1.9 MiB (2031616 bytes)"},
		{adapters.AnswerLimit{Engine: "E", Bytes: 10}, 11, "invalid request: the answer is 11 bytes; E takes answers of at most 10 bytes (10 bytes)"},
	}
	for _, tc := range tests {
		err := tc.limit.Check(tc.size)
		if err == nil || err.Error() != tc.want || !errors.Is(err, adapters.ErrInvalid) {
			t.Errorf("%+v.Check(%d): %v, want %q wrapping ErrInvalid", tc.limit, tc.size, err, tc.want)
		}
	}
}

func TestSucceededWith(t *testing.T) {
	tests := []struct {
		output string
		want   adapters.Outcome
	}{
		{`{"a":1}`, adapters.Outcome{State: adapters.Succeeded, Native: "DONE", Output: json.RawMessage(`{"a":1}`)}},
		{` "text" `, adapters.Outcome{State: adapters.Succeeded, Native: "DONE", Output: json.RawMessage(` "text" `)}},
		{"", adapters.Outcome{State: adapters.Succeeded, Native: "DONE", Output: json.RawMessage(`null`)}},
		{" \n", adapters.Outcome{State: adapters.Succeeded, Native: "DONE", Output: json.RawMessage(`null`)}},
		{"NaN", adapters.Outcome{State: adapters.Failed, Native: "DONE", Error: adapters.InvalidOutputError,
			Cause: "the execution succeeded, but taskgate cannot return its output: it is not valid JSON (invalid character 'N' looking for beginning of value, at byte 1)"}},
		{`{"confirm":NaN}`, adapters.Outcome{State: adapters.Failed, Native: "DONE", Error: adapters.InvalidOutputError,
			Cause: "the execution succeeded, but taskgate cannot return its output: it is not valid JSON (invalid character 'N' looking for beginning of value, at byte 12)"}},
		{`{"a":`, adapters.Outcome{State: adapters.Failed, Native: "DONE", Error: adapters.InvalidOutputError,
			Cause: "the execution succeeded, but taskgate cannot return its output: it is not valid JSON (unexpected end of JSON input, at byte 5)"}},
		{`{} {}`, adapters.Outcome{State: adapters.Failed, Native: "DONE", Error: adapters.InvalidOutputError,
			Cause: "the execution succeeded, but taskgate cannot return its output: it is not valid JSON (invalid character '{' after top-level value, at byte 4)"}},
	}
	for _, tc := range tests {
		got := adapters.SucceededWith("DONE", []byte(tc.output))
		if got.State != tc.want.State || got.Native != tc.want.Native || string(got.Output) != string(tc.want.Output) || got.Error != tc.want.Error || got.Cause != tc.want.Cause {
			t.Errorf("SucceededWith(%q):\n got %+v (output %s)\nwant %+v (output %s)", tc.output, got, got.Output, tc.want, tc.want.Output)
		}
	}
}
