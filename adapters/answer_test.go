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
