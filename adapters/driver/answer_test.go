package driver_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/taskgate/taskgate/adapters/driver"
)

func TestAnswerCheck(t *testing.T) {
	tests := []struct {
		a    driver.Answer
		want string
	}{
		{driver.Answer{Action: "accept", Content: json.RawMessage(`{"confirm":true}`)}, ""},
		{driver.Answer{Action: "accept", Content: json.RawMessage(`{}`)}, ""},
		{driver.Answer{Action: "decline"}, ""},
		{driver.Answer{Action: "cancel", Content: json.RawMessage(`"ignored"`)}, ""},
		{driver.Answer{Action: "accept"}, `invalid request: an accepted answer's content must be a JSON object, like {"confirm": true}`},
		{driver.Answer{Action: "accept", Content: json.RawMessage(`null`)}, `invalid request: an accepted answer's content must be a JSON object, like {"confirm": true}`},
		{driver.Answer{Action: "accept", Content: json.RawMessage(`[1]`)}, `invalid request: an accepted answer's content must be a JSON object, like {"confirm": true}`},
		{driver.Answer{Action: "Accept"}, `invalid request: answer action "Accept": want accept, decline or cancel`},
		{driver.Answer{}, `invalid request: answer action "": want accept, decline or cancel`},
	}
	for _, tc := range tests {
		err := tc.a.Check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v, want no error", tc.a, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want || !errors.Is(err, driver.ErrInvalid)):
			t.Errorf("%+v: %v, want %q wrapping ErrInvalid", tc.a, err, tc.want)
		}
	}
	if driver.InputRequired.String() != "input_required" || driver.InputRequired.Terminal() || driver.InputRequired != 6 {
		t.Errorf("InputRequired: %q, terminal %v, value %d", driver.InputRequired, driver.InputRequired.Terminal(), driver.InputRequired)
	}
}

func TestAnswerLimit(t *testing.T) {
	limit := driver.AnswerLimit{Engine: "Step Functions", Bytes: 256 << 10}
	if err := limit.Check(256 << 10); err != nil {
		t.Errorf("an answer of exactly the limit: %v", err)
	}
	tests := []struct {
		limit driver.AnswerLimit
		size  int
		want  string
	}{
		{limit, 256<<10 + 1, "invalid request: the answer is 256.0 KiB; Step Functions takes answers of at most 256 KiB (262144 bytes)"},
		{limit, 3 << 20, "invalid request: the answer is 3 MiB; Step Functions takes answers of at most 256 KiB (262144 bytes)"},
		{driver.AnswerLimit{Engine: "Temporal", Bytes: 1984 << 10}, 3<<20 + 50, "invalid request: the answer is 3.0 MiB; Temporal takes answers of at most 1.9 MiB (2031616 bytes)"},
		{driver.AnswerLimit{Engine: "E", Bytes: 10}, 11, "invalid request: the answer is 11 bytes; E takes answers of at most 10 bytes (10 bytes)"},
	}
	for _, tc := range tests {
		err := tc.limit.Check(tc.size)
		if err == nil || err.Error() != tc.want || !errors.Is(err, driver.ErrInvalid) {
			t.Errorf("%+v.Check(%d): %v, want %q wrapping ErrInvalid", tc.limit, tc.size, err, tc.want)
		}
	}
}

func TestSucceededWith(t *testing.T) {
	tests := []struct {
		output string
		want   driver.Outcome
	}{
		{`{"a":1}`, driver.Outcome{State: driver.Succeeded, Native: "DONE", Output: json.RawMessage(`{"a":1}`)}},
		{` "text" `, driver.Outcome{State: driver.Succeeded, Native: "DONE", Output: json.RawMessage(` "text" `)}},
		{"", driver.Outcome{State: driver.Succeeded, Native: "DONE", Output: json.RawMessage(`null`)}},
		{" \n", driver.Outcome{State: driver.Succeeded, Native: "DONE", Output: json.RawMessage(`null`)}},
		{"NaN", driver.Outcome{State: driver.Failed, Native: "DONE", Error: driver.InvalidOutputError,
			Cause: "the execution succeeded, but taskgate cannot return its output: it is not valid JSON (invalid character 'N' looking for beginning of value, at byte 1)"}},
		{`{"confirm":NaN}`, driver.Outcome{State: driver.Failed, Native: "DONE", Error: driver.InvalidOutputError,
			Cause: "the execution succeeded, but taskgate cannot return its output: it is not valid JSON (invalid character 'N' looking for beginning of value, at byte 12)"}},
		{`{"a":`, driver.Outcome{State: driver.Failed, Native: "DONE", Error: driver.InvalidOutputError,
			Cause: "the execution succeeded, but taskgate cannot return its output: it is not valid JSON (unexpected end of JSON input, at byte 5)"}},
		{`{} {}`, driver.Outcome{State: driver.Failed, Native: "DONE", Error: driver.InvalidOutputError,
			Cause: "the execution succeeded, but taskgate cannot return its output: it is not valid JSON (invalid character '{' after top-level value, at byte 4)"}},
	}
	for _, tc := range tests {
		got := driver.SucceededWith("DONE", []byte(tc.output))
		if got.State != tc.want.State || got.Native != tc.want.Native || string(got.Output) != string(tc.want.Output) || got.Error != tc.want.Error || got.Cause != tc.want.Cause {
			t.Errorf("SucceededWith(%q):\n got %+v (output %s)\nwant %+v (output %s)", tc.output, got, got.Output, tc.want, tc.want.Output)
		}
	}
}
