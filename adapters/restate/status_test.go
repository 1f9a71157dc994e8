package restate

import (
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters/driver"
)

// TestStatuses: every invocation status Restate's sys_invocation names, onto the contract (the
// table of docs/restate.md).
func TestStatuses(t *testing.T) {
	next := time.Date(2026, 12, 1, 10, 30, 5, 0, time.UTC)
	started := invocation{ID: "inv_1", Pinned: "dp_1", AttemptServer: "restate-sdk-go/v1.2.0"}
	questions := `{"invocation":"inv_1","open":[{"key":"approve","message":"Deploy?","schema":{"type":"object"},"awakeable":"sign_1"}]}`
	progress := `"step 2 of 3: test"`
	with := func(inv invocation, edit func(*invocation)) invocation { edit(&inv); return inv }
	for _, c := range []struct {
		inv     invocation
		state   driver.State
		native  string
		message string
	}{
		{invocation{Status: pending}, driver.Submitted, "pending", "waiting for the invocations before it on its key to end"},
		{invocation{Status: scheduled}, driver.Submitted, "scheduled", "scheduled to start later"},
		{invocation{Status: ready}, driver.Submitted, "ready", "waiting to be sent to its deployment"},
		{invocation{Status: running}, driver.Submitted, "running", "waiting for a deployment to take it"},
		{invocation{Status: backingOff, Attempts: 3, LastFailure: "[500 Internal] error when calling 'http://10.0.0.1:9080/': Connection refused"},
			driver.Submitted, "backing-off", "waiting for a deployment to take it; attempt 3 failed, last failure: [500 Internal] error when calling 'http://10.0.0.1:9080/': Connection refused"},
		{with(started, func(i *invocation) { i.Status = running }), driver.Working, "running", ""},
		{with(started, func(i *invocation) { i.Status, i.Progress = running, &progress }), driver.Working, "running", "step 2 of 3: test"},
		{with(started, func(i *invocation) { i.Status = suspended }), driver.Working, "suspended", ""},
		{with(started, func(i *invocation) {
			i.Status, i.Attempts, i.LastFailure, i.NextRetry = backingOff, 2, "[500 Internal] not yet\ngoroutine 1 [running]:", &next
		}), driver.Working, "backing-off", "attempt 2 failed, last failure: [500 Internal] not yet; next attempt at 10:30:05"},
		{with(started, func(i *invocation) { i.Status, i.Attempts, i.LastFailure = paused, 70, "[500 Internal] not yet" }),
			driver.Working, "paused", "paused after 70 attempts, last failure: [500 Internal] not yet"},
		{with(started, func(i *invocation) { i.Status, i.Questions = suspended, &questions }), driver.InputRequired, "suspended", `waiting for an answer to "approve"`},
		{with(started, func(i *invocation) { i.Status, i.Questions, i.Progress = running, &questions, &progress }), driver.InputRequired, "running", "step 2 of 3: test"},
		{with(started, func(i *invocation) { i.ID, i.Status, i.Questions = "inv_2", suspended, &questions }), driver.Working, "suspended", ""},
		{invocation{Status: completed, Result: "success"}, driver.Succeeded, "succeeded", ""},
		{invocation{Status: completed, Result: "failure", Failure: "[500] disk full"}, driver.Failed, "failed", "[500] disk full"},
		{invocation{Status: completed, Result: "failure", Failure: "[409] Cancelled"}, driver.Cancelled, "cancelled", "[409] Cancelled"},
		{invocation{Status: completed, Result: "failure", Failure: "[409] canceled"}, driver.Cancelled, "cancelled", "[409] canceled"},
		{invocation{Status: completed, Result: "failure", Failure: "[409] killed"}, driver.Cancelled, "killed", "[409] killed"},
	} {
		st := c.inv.status()
		if st.State != c.state || st.Native != c.native || st.Message != c.message {
			t.Errorf("%s %s: %v %q %q, want %v %q %q", c.inv.Status, c.inv.Result, st.State, st.Native, st.Message, c.state, c.native, c.message)
		}
	}
}

func TestParseRetention(t *testing.T) {
	for s, want := range map[string]time.Duration{
		"1d": 24 * time.Hour, "1h 30m": 90 * time.Minute, "5 hours": 5 * time.Hour, "1w": 7 * 24 * time.Hour,
		"500ms": 500 * time.Millisecond, "": 0, "forever": 0, "1d x": 0, "P1D": 0,
	} {
		if got := parseRetention(s); got != want {
			t.Errorf("parseRetention(%q) = %v, want %v", s, got, want)
		}
	}
}
