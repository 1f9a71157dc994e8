package enginetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/pace"
)

// RunConformanceTests runs the suite against the engine that newHarness sets up: through the
// whole Stack taskgate serves an engine with, and, where what the driver answers would be hidden
// by the readings (a read right after a start), against its Conn directly.
//
// Every subtest calls t.Parallel and then newHarness with its own *testing.T, so newHarness runs
// concurrently and once per subtest: a harness that is costly to build (a client, a worker) should
// share that set-up across calls and release it in the parent test's t.Cleanup, and make Close
// release only what one call made. Subtests whose name ShouldSkip reports are skipped with its
// reason.
func RunConformanceTests(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(*testing.T, *suite)
	}{
		{"StartDescribeWait", testStartDescribeWait},
		{"VisibilityLag", testVisibilityLag},
		{"OutcomeBeforeEnd", testOutcomeBeforeEnd},
		{"Fail", testFail},
		{"Timeout", testTimeout},
		{"CancelRunning", testCancelRunning},
		{"CancelReason", testCancelReason},
		{"CancelEnded", testCancelEnded},
		{"KeySameInput", testKeySameInput},
		{"KeyOtherInput", testKeyOtherInput},
		{"NoKeyDistinct", testNoKeyDistinct},
		{"Missing", testMissing},
		{"Owns", testOwns},
		{"Run", testRun},
		{"WaitHonoursContext", testWaitHonoursContext},
		{"Submitted", testSubmitted},
		{"ReadAfterCreate", testReadAfterCreate},
		{"ConcurrentStarts", testConcurrentStarts},
		{"Check", testCheck},
		{"Invalid", testInvalid},
		{"KeyRef", testKeyRef},
		{"NativeRefs", testNativeRefs},
		{"CallerBinding", testCallerBinding},
		{"List", testList},
		{"Sweep", testSweep},
		{"SweepEnded", testSweepEnded},
		{"SweepGroup", testSweepGroup},
		{"AskAccept", testAskAccept},
		{"AskDecline", testAskDecline},
		{"AskTwo", testAskTwo},
		{"AnswerNotOpen", testAnswerNotOpen},
		{"CancelAsking", testCancelAsking},
		{"Progress", testProgress},
		{"Unavailable", testUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			t.Cleanup(h.Close)
			if skip, why := h.ShouldSkip(tc.name); skip {
				t.Skip(why)
			}
			tc.fn(t, &suite{Harness: h, engine: Stack(h.Conn(), h.Driver().Info())})
		})
	}
}

// subtestTimeout bounds each subtest, so that an engine that never answers fails instead of hanging.
const subtestTimeout = 2 * time.Minute

// settle bounds how long an execution may take to reach a state it was asked for (cancelled).
const settle = 20 * time.Second

func testStartDescribeWait(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, echo := h.Engine(), h.Target("echo")
	text := unique(t)
	// Long enough that a loaded engine (an emulator on two busy cores takes over 2 s for a start
	// and its read-after-create) cannot finish it before the Describe below.
	r := start(ctx, t, h, echo, adapters.StartRequest{Input: echoInput(t, 5, text)})

	for name, e := range map[string]adapters.Conn{"the Engine": unpaced{e}, "its Conn": h.Conn()} {
		st, err := e.Describe(ctx, echo, r)
		if err != nil {
			t.Fatalf("Describe of %s right after Start: %v", name, err)
		}
		if st.State != adapters.Submitted && st.State != adapters.Working {
			t.Errorf("Describe of %s right after Start: state %v (native %q), want submitted or working", name, st.State, st.Native)
		}
		if st.Started.IsZero() {
			t.Errorf("Describe of %s right after Start: Started is zero", name)
		}
	}

	out, err := e.Wait(ctx, echo, r, pace.Pace{})
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	checkSucceeded(t, "Wait", out, text)

	st, err := e.Describe(ctx, echo, r, pace.Pace{})
	if err != nil {
		t.Fatalf("Describe after Wait: %v", err)
	}
	if st.State != adapters.Succeeded {
		t.Errorf("Describe after Wait: state %v, want succeeded", st.State)
	}
	if st.Native == "" {
		t.Errorf("Describe after Wait: empty Native")
	}
	if st.Started.IsZero() || st.Updated.IsZero() {
		t.Errorf("Describe after Wait: Started %v, Updated %v: want both set", st.Started, st.Updated)
	}
	if st.Updated.Before(st.Started) {
		t.Errorf("Describe after Wait: Updated %v is before Started %v", st.Updated, st.Started)
	}
	if out.Native != st.Native {
		t.Errorf("Outcome Native %q, Describe Native %q: want the same", out.Native, st.Native)
	}

	again, err := e.Outcome(ctx, echo, r)
	if err != nil {
		t.Fatalf("Outcome after Wait: %v", err)
	}
	checkSucceeded(t, "Outcome after Wait", again, text)
	sameEndedStatus(t, h, echo, r, again)
}

// testVisibilityLag: the driver declares how long after a start its engine may not find the
// execution (driver.VisibilityLagger), which the Engine over it reads. (StartDescribeWait checks
// that a start is found at once on the test's engine, which every engine here does.)
func testVisibilityLag(t *testing.T, h *suite) {
	l, ok := h.Conn().(driver.VisibilityLagger)
	if !ok {
		t.Fatalf("the Conn (%T) declares no visibility lag: implement driver.VisibilityLagger (zero when a start is found at once)", h.Conn())
	}
	lag := l.VisibilityLag()
	if lag < 0 || lag > time.Minute {
		t.Errorf("the declared visibility lag is %v: want zero or more, and no more than a minute", lag)
	}
	if got := h.Engine().VisibilityLag(); got != lag {
		t.Errorf("the Engine's visibility lag is %v, want the %v its Conn declares", got, lag)
	}
}

func testOutcomeBeforeEnd(t *testing.T, h *suite) {
	ctx := testContext(t)
	echo := h.Target("echo")
	r := start(ctx, t, h, echo, adapters.StartRequest{Input: echoInput(t, 2, unique(t))})
	cancelAtCleanup(t, h, echo, r)

	_, err := h.Engine().Outcome(ctx, echo, r)
	if !errors.Is(err, adapters.ErrNotEnded) {
		t.Errorf("Outcome of a running execution: error %v, want ErrNotEnded", err)
	}
}

func testFail(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, fail := h.Engine(), h.Target("fail")
	reason := "conformance failure " + unique(t)
	in := mustJSON(t, map[string]any{"seconds": 1, "reason": reason})
	r := start(ctx, t, h, fail, adapters.StartRequest{Input: in})

	out, err := e.Wait(ctx, fail, r, pace.Pace{})
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	want := adapters.Outcome{State: adapters.Failed, Native: out.Native, Error: "Example.Failure", Cause: reason}
	if out.Native == "" || !reflect.DeepEqual(withoutOutput(out), want) {
		t.Errorf("Wait: outcome %+v, want failed with a native state, error %q, cause %q", out, want.Error, want.Cause)
	}

	st, err := e.Describe(ctx, fail, r, pace.Pace{})
	if err != nil {
		t.Fatalf("Describe after Wait: %v", err)
	}
	if st.State != adapters.Failed || st.Native != out.Native {
		t.Errorf("Describe after Wait: state %v native %q, want failed %q", st.State, st.Native, out.Native)
	}
	sameEndedStatus(t, h, fail, r, out)
	again, err := e.Outcome(ctx, fail, r)
	if err != nil {
		t.Fatalf("Outcome after Wait: %v", err)
	}
	if !reflect.DeepEqual(withoutOutput(again), want) {
		t.Errorf("Outcome after Wait: %+v, want %+v", again, want)
	}
}

func testTimeout(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, timeout := h.Engine(), h.Target("timeout")
	r := start(ctx, t, h, timeout, adapters.StartRequest{Input: mustJSON(t, map[string]any{"seconds": 30})})

	out, err := e.Wait(ctx, timeout, r, pace.Pace{})
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if out.State != adapters.Failed || out.Native != "TIMED_OUT" {
		t.Errorf("Wait: outcome %+v, want state failed, native TIMED_OUT", out)
	}
	if out.Error == "" {
		t.Errorf("Wait: a timed-out outcome has an empty Error")
	}
	st, err := e.Describe(ctx, timeout, r, pace.Pace{})
	if err != nil {
		t.Fatalf("Describe after Wait: %v", err)
	}
	if st.State != adapters.Failed || st.Native != "TIMED_OUT" {
		t.Errorf("Describe after Wait: state %v native %q, want failed TIMED_OUT", st.State, st.Native)
	}
}

func testCancelRunning(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, echo := h.Engine(), h.Target("echo")
	r := start(ctx, t, h, echo, adapters.StartRequest{Input: echoInput(t, 60, unique(t))})
	reason := "conformance cancel " + unique(t)

	if err := e.Cancel(ctx, echo, r, reason); err != nil {
		t.Fatalf("Cancel of a running execution: %v", err)
	}
	st := awaitTerminal(ctx, t, unpaced{e}, echo, r)
	if st.State != adapters.Cancelled || st.Native == "" {
		t.Fatalf("Describe after Cancel: state %v native %q, want cancelled", st.State, st.Native)
	}
	out, err := e.Outcome(ctx, echo, r)
	if err != nil {
		t.Fatalf("Outcome after Cancel: %v", err)
	}
	if out.State != adapters.Cancelled || out.Native != st.Native {
		t.Errorf("Outcome after Cancel: %+v, want state cancelled, native %q", out, st.Native)
	}
	if err := e.Cancel(ctx, echo, r, reason); !errors.Is(err, adapters.ErrEnded) {
		t.Errorf("second Cancel: error %v, want ErrEnded", err)
	}
}

// testCancelReason: the reason of a Cancel is the cause of the outcome, for engines that keep one.
func testCancelReason(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, echo := h.Engine(), h.Target("echo")
	r := start(ctx, t, h, echo, adapters.StartRequest{Input: echoInput(t, 60, unique(t))})
	reason := "conformance cancel " + unique(t)
	if err := e.Cancel(ctx, echo, r, reason); err != nil {
		t.Fatalf("Cancel of a running execution: %v", err)
	}
	awaitTerminal(ctx, t, unpaced{e}, echo, r)
	out, err := e.Outcome(ctx, echo, r)
	if err != nil {
		t.Fatalf("Outcome after Cancel: %v", err)
	}
	if out.State != adapters.Cancelled || out.Cause != reason {
		t.Errorf("Outcome after Cancel: %+v, want state cancelled and cause %q", out, reason)
	}
}

func testCancelEnded(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, echo := h.Engine(), h.Target("echo")
	text := unique(t)
	r, out, err := e.Run(ctx, echo, adapters.StartRequest{Input: echoInput(t, 0, text)}, pace.Pace{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkSucceeded(t, "Run", out, text)

	if err := e.Cancel(ctx, echo, r, "too late"); !errors.Is(err, adapters.ErrEnded) {
		t.Errorf("Cancel of an ended execution: error %v, want ErrEnded", err)
	}
	st, err := e.Describe(ctx, echo, r, pace.Pace{})
	if err != nil {
		t.Fatalf("Describe after a late Cancel: %v", err)
	}
	if st.State != adapters.Succeeded {
		t.Errorf("Describe after a late Cancel: state %v, want succeeded", st.State)
	}
}

func testKeySameInput(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, echo := h.Engine(), h.Target("echo")
	text := unique(t)
	req := adapters.StartRequest{Input: echoInput(t, 1, text), Key: "key-" + unique(t)}

	first := start(ctx, t, h, echo, req)
	second := start(ctx, t, h, echo, req)
	if second != first {
		t.Fatalf("same key and input while running: Ref %v, want the first one %v", second, first)
	}
	out, err := e.Wait(ctx, echo, first, pace.Pace{})
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	checkSucceeded(t, "Wait", out, text)

	third := start(ctx, t, h, echo, req)
	if third != first {
		t.Fatalf("same key and input after the end: Ref %v, want the first one %v", third, first)
	}
	st, err := e.Describe(ctx, echo, third, pace.Pace{})
	if err != nil {
		t.Fatalf("Describe after the repeated Start: %v", err)
	}
	if st.State != adapters.Succeeded {
		t.Errorf("Describe after the repeated Start: state %v, want succeeded (no new execution)", st.State)
	}
}

func testKeyOtherInput(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, echo := h.Engine(), h.Target("echo")
	key := "key-" + unique(t)
	first := start(ctx, t, h, echo, adapters.StartRequest{Input: echoInput(t, 0, "one"), Key: key})

	other := adapters.StartRequest{Input: echoInput(t, 0, "two"), Key: key}
	if r, err := e.Start(ctx, echo, other, pace.Pace{}); !errors.Is(err, adapters.ErrKeyConflict) {
		t.Errorf("same key, other input: Ref %v, error %v, want ErrKeyConflict", r, err)
	}
	if _, err := e.Wait(ctx, echo, first, pace.Pace{}); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if r, err := e.Start(ctx, echo, other, pace.Pace{}); !errors.Is(err, adapters.ErrKeyConflict) {
		t.Errorf("same key, other input, after the end: Ref %v, error %v, want ErrKeyConflict", r, err)
	}
}

func testNoKeyDistinct(t *testing.T, h *suite) {
	ctx := testContext(t)
	echo := h.Target("echo")
	req := adapters.StartRequest{Input: echoInput(t, 0, unique(t))}
	first := start(ctx, t, h, echo, req)
	second := start(ctx, t, h, echo, req)
	if first == second {
		t.Errorf("two Starts without a key returned the same Ref %v", first)
	}
}

func testMissing(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, echo := h.Engine(), h.Target("echo")
	r := h.Missing()
	if !e.Owns(echo, r, "") {
		t.Fatalf("Owns(echo, Missing()) = false: the harness must return a Ref of the echo target")
	}
	if _, err := e.Describe(ctx, echo, r, pace.Pace{}); !errors.Is(err, adapters.ErrNotFound) {
		t.Errorf("Describe: error %v, want ErrNotFound", err)
	}
	if _, err := e.Outcome(ctx, echo, r); !errors.Is(err, adapters.ErrNotFound) {
		t.Errorf("Outcome: error %v, want ErrNotFound", err)
	}
	if err := e.Cancel(ctx, echo, r, "missing"); !errors.Is(err, adapters.ErrNotFound) {
		t.Errorf("Cancel: error %v, want ErrNotFound", err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, settle)
	defer cancel()
	if _, err := e.Wait(waitCtx, echo, r, pace.Pace{}); !errors.Is(err, adapters.ErrNotFound) {
		t.Errorf("Wait: error %v, want ErrNotFound", err)
	}
}

func testOwns(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, echo, fail := h.Engine(), h.Target("echo"), h.Target("fail")
	if echo.Name == fail.Name {
		t.Fatalf("the harness gives echo and fail the same Name %q: they must be distinct targets", echo.Name)
	}
	key := "key-" + unique(t)
	echoRefs := []adapters.Ref{
		start(ctx, t, h, echo, adapters.StartRequest{Input: echoInput(t, 0, "owned")}),
		start(ctx, t, h, echo, adapters.StartRequest{Input: echoInput(t, 0, "owned"), Key: key}),
	}
	failIn := mustJSON(t, map[string]any{"seconds": 0, "reason": "owned"})
	failRefs := []adapters.Ref{
		start(ctx, t, h, fail, adapters.StartRequest{Input: failIn}),
		start(ctx, t, h, fail, adapters.StartRequest{Input: failIn, Key: key}),
	}
	for _, r := range echoRefs {
		if !e.Owns(echo, r, "") {
			t.Errorf("Owns(echo, %v) = false for a Ref that Start returned for echo", r)
		}
		if e.Owns(fail, r, "") {
			t.Errorf("Owns(fail, %v) = true for a Ref of echo", r)
		}
	}
	for _, r := range failRefs {
		if !e.Owns(fail, r, "") {
			t.Errorf("Owns(fail, %v) = false for a Ref that Start returned for fail", r)
		}
		if e.Owns(echo, r, "") {
			t.Errorf("Owns(echo, %v) = true for a Ref of fail", r)
		}
	}
	if !e.Owns(echo, h.Missing(), "") {
		t.Errorf("Owns(echo, Missing()) = false")
	}
	if e.Owns(echo, adapters.Ref{}, "") {
		t.Errorf("Owns(echo, Ref{}) = true")
	}
	foreign := h.Foreign()
	if len(foreign) == 0 {
		t.Errorf("the harness returns no Foreign refs")
	}
	for _, r := range foreign {
		if e.Owns(echo, r, "") {
			t.Errorf("Owns(echo, %#v) = true for a Foreign ref", r)
		}
	}
}

func testRun(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, echo := h.Engine(), h.Target("echo")
	text := unique(t)
	r, out, err := e.Run(ctx, echo, adapters.StartRequest{Input: echoInput(t, 0, text)}, pace.Pace{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkSucceeded(t, "Run", out, text)
	if !e.Owns(echo, r, "") {
		t.Errorf("Owns(echo, %v) = false for the Ref that Run returned", r)
	}
	st, err := e.Describe(ctx, echo, r, pace.Pace{})
	if err != nil {
		t.Fatalf("Describe after Run: %v", err)
	}
	if st.State != adapters.Succeeded {
		t.Errorf("Describe after Run: state %v, want succeeded", st.State)
	}
}

func testWaitHonoursContext(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, echo := h.Engine(), h.Target("echo")
	r := start(ctx, t, h, echo, adapters.StartRequest{Input: echoInput(t, 60, unique(t))})
	cancelAtCleanup(t, h, echo, r)

	// The execution runs for a minute: returning well before that proves Wait watched ctx.
	const promptly = 15 * time.Second

	cancelCtx, cancel := context.WithCancel(ctx)
	time.AfterFunc(300*time.Millisecond, cancel)
	begin := time.Now()
	_, err := e.Wait(cancelCtx, echo, r, pace.Pace{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with a cancelled context: error %v, want context.Canceled", err)
	}
	if d := time.Since(begin); d > promptly {
		t.Errorf("Wait with a cancelled context returned after %v", d)
	}

	deadlineCtx, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel2()
	begin = time.Now()
	_, err = e.Wait(deadlineCtx, echo, r, pace.Pace{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait past its deadline: error %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(begin); d > promptly {
		t.Errorf("Wait past its deadline returned after %v", d)
	}
}

func testSubmitted(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, unpolled := h.Engine(), h.Target("unpolled")
	r := start(ctx, t, h, unpolled, adapters.StartRequest{Input: echoInput(t, 0, unique(t))})
	cancelAtCleanup(t, h, unpolled, r)

	for i := range 2 {
		if i > 0 {
			time.Sleep(time.Second)
		}
		st, err := e.Describe(ctx, unpolled, r, pace.Pace{})
		if err != nil {
			t.Fatalf("Describe: %v", err)
		}
		if st.State != adapters.Submitted || st.Native == "" {
			t.Errorf("Describe #%d of an execution no worker serves: state %v native %q, want submitted", i+1, st.State, st.Native)
		}
	}
	if _, err := e.Outcome(ctx, unpolled, r); !errors.Is(err, adapters.ErrNotEnded) {
		t.Errorf("Outcome of a submitted execution: error %v, want ErrNotEnded", err)
	}
}

// testReadAfterCreate reads the Conn itself: through the Stack, the start is the first reading.
func testReadAfterCreate(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, echo := h.Conn(), h.Target("echo")
	for range 5 {
		r := start(ctx, t, h, echo, adapters.StartRequest{Input: echoInput(t, 0, unique(t))})
		st, err := e.Describe(ctx, echo, r)
		if err != nil {
			t.Fatalf("Describe right after Start of %v: %v", r, err)
		}
		if st.State == adapters.Failed || st.State == adapters.Cancelled {
			t.Errorf("Describe right after Start of %v: state %v", r, st.State)
		}
	}
}

func testConcurrentStarts(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, echo := h.Engine(), h.Target("echo")
	const n = 20
	refs := make([]adapters.Ref, n)
	errs := make([]error, n)
	texts := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		texts[i] = unique(t)
		in := echoInput(t, 0, texts[i])
		wg.Go(func() { refs[i], errs[i] = e.Start(ctx, echo, adapters.StartRequest{Input: in}, pace.Pace{}) })
	}
	wg.Wait()
	seen := map[adapters.Ref]int{}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent Start #%d: %v", i, err)
		}
		if j, dup := seen[refs[i]]; dup {
			t.Errorf("concurrent Starts #%d and #%d returned the same Ref %v", j, i, refs[i])
		}
		seen[refs[i]] = i
		if !e.Owns(echo, refs[i], "") {
			t.Errorf("Owns(echo, %v) = false for a Ref Start returned", refs[i])
		}
	}
	outs := make([]adapters.Outcome, n)
	for i := range n {
		wg.Go(func() { outs[i], errs[i] = e.Wait(ctx, echo, refs[i], pace.Pace{}) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("Wait #%d: %v", i, errs[i])
			continue
		}
		checkSucceeded(t, "Wait", outs[i], texts[i])
	}
}

func testCheck(t *testing.T, h *suite) {
	ctx := testContext(t)
	e := h.Engine()
	for _, name := range []string{"echo", "fail", "timeout"} {
		if _, err := e.Check(ctx, h.Target(name)); err != nil {
			t.Errorf("Check(%s): %v", name, err)
		}
	}
	info, err := e.Check(ctx, h.Target("absent"))
	if err == nil && len(info.Warnings) == 0 {
		t.Errorf("Check of a target the engine does not have: %+v, no error and no warning", info)
	}
	if err != nil && errors.Is(err, adapters.ErrUnavailable) {
		t.Errorf("Check of a target the engine does not have: %v: the engine answered, it is not unavailable", err)
	}
	for name, tg := range map[string]adapters.Target{"wrongkind": h.Target("wrongkind"), "the zero Target": {}} {
		if _, err := e.Check(ctx, tg); !errors.Is(err, adapters.ErrInvalid) {
			t.Errorf("Check of %s %+v: error %v, want ErrInvalid", name, tg, err)
		}
	}
}

func testInvalid(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, echo := h.Engine(), h.Target("echo")
	if r, err := e.Start(ctx, echo, adapters.StartRequest{Input: json.RawMessage(`{"seconds":`)}, pace.Pace{}); !errors.Is(err, adapters.ErrInvalid) {
		t.Errorf("Start with input that is not JSON: Ref %v, error %v, want ErrInvalid", r, err)
	}
	valid := echoInput(t, 0, unique(t))
	for name, tg := range map[string]adapters.Target{"wrongkind": h.Target("wrongkind"), "the zero Target": {}} {
		if r, err := e.Start(ctx, tg, adapters.StartRequest{Input: valid}, pace.Pace{}); !errors.Is(err, adapters.ErrInvalid) {
			t.Errorf("Start of %s %+v: Ref %v, error %v, want ErrInvalid", name, tg, r, err)
		}
		if r, _, err := e.Run(ctx, tg, adapters.StartRequest{Input: valid}, pace.Pace{}); !errors.Is(err, adapters.ErrInvalid) {
			t.Errorf("Run of %s %+v: Ref %v, error %v, want ErrInvalid", name, tg, r, err)
		}
	}
}

func testKeyRef(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, echo, fail := h.Engine(), h.Target("echo"), h.Target("fail")
	key := "key-" + unique(t)
	kr := e.KeyRef(echo, key, "")
	if again := e.KeyRef(echo, key, ""); again != kr {
		t.Errorf("KeyRef is not stable: %v, then %v", kr, again)
	}
	if other := e.KeyRef(echo, key+"x", ""); other == kr {
		t.Errorf("KeyRef of two keys: both %v", kr)
	}
	if other := e.KeyRef(fail, key, ""); other == kr {
		t.Errorf("KeyRef of one key for two targets: both %v", kr)
	}
	if _, err := e.Describe(ctx, echo, kr, pace.Pace{}); !errors.Is(err, adapters.ErrNotFound) {
		t.Errorf("Describe(KeyRef) before any Start with the key: error %v, want ErrNotFound", err)
	}

	text := unique(t)
	r := start(ctx, t, h, echo, adapters.StartRequest{Input: echoInput(t, 1, text), Key: key})
	byRef, err := e.Describe(ctx, echo, r, pace.Pace{})
	if err != nil {
		t.Fatalf("Describe(Start's Ref): %v", err)
	}
	byKey, err := e.Describe(ctx, echo, kr, pace.Pace{})
	if err != nil {
		t.Fatalf("Describe(KeyRef) after Start with the key: %v", err)
	}
	if !byKey.Started.Equal(byRef.Started) {
		t.Errorf("Describe(KeyRef) reads an execution started %v, Start's Ref one started %v: want the same execution", byKey.Started, byRef.Started)
	}
	if _, err := e.Wait(ctx, echo, r, pace.Pace{}); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	out, err := e.Outcome(ctx, echo, kr)
	if err != nil {
		t.Fatalf("Outcome(KeyRef): %v", err)
	}
	checkSucceeded(t, "Outcome(KeyRef)", out, text)
}

func testNativeRefs(t *testing.T, h *suite) {
	ctx := testContext(t)
	d, echo := h.Driver(), h.Target("echo")
	refs := []adapters.Ref{
		start(ctx, t, h, echo, adapters.StartRequest{Input: echoInput(t, 0, unique(t))}),
		start(ctx, t, h, echo, adapters.StartRequest{Input: echoInput(t, 0, unique(t)), Key: "key-" + unique(t)}),
		h.Missing(),
	}
	for _, r := range refs {
		id := d.FormatRef(r)
		back, err := d.ParseRef(id)
		if err != nil || back != r {
			t.Errorf("ParseRef(FormatRef(%v)) = ParseRef(%q) = %v, %v; want the Ref back", r, id, back, err)
		}
	}
	for _, garbage := range []string{"", "/", "not an id", "x/y/z"} {
		if r, err := d.ParseRef(garbage); err == nil {
			t.Errorf("ParseRef(%q) = %v, want an error", garbage, r)
		}
	}
}

func testCallerBinding(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, echo := h.Engine(), h.Target("echo")
	key := "key-" + unique(t)
	in := echoInput(t, 0, unique(t))
	alice := start(ctx, t, h, echo, adapters.StartRequest{Input: in, Key: key, Caller: "alice"})
	if again := start(ctx, t, h, echo, adapters.StartRequest{Input: in, Key: key, Caller: "alice"}); again != alice {
		t.Errorf("the same caller, key and input: Ref %v, want the first one %v", again, alice)
	}
	bob, err := e.Start(ctx, echo, adapters.StartRequest{Input: in, Key: key, Caller: "bob"}, pace.Pace{})
	switch {
	case err != nil:
		t.Fatalf("another caller's Start with the same key: %v, want an execution of its own", err)
	case bob == alice:
		t.Fatalf("another caller's Start with the same key and input got the first caller's execution %v", alice)
	}
	if !e.Owns(echo, alice, "alice") || e.Owns(echo, alice, "bob") || e.Owns(echo, bob, "alice") || e.Owns(echo, alice, "") {
		t.Errorf("Owns tells callers apart wrongly: alice's %v and bob's %v", alice, bob)
	}
	unkeyed := start(ctx, t, h, echo, adapters.StartRequest{Input: in, Caller: "alice"})
	if !e.Owns(echo, unkeyed, "alice") || e.Owns(echo, unkeyed, "bob") {
		t.Errorf("Owns of alice's unkeyed %v: alice %v, bob %v", unkeyed, e.Owns(echo, unkeyed, "alice"), e.Owns(echo, unkeyed, "bob"))
	}
	for _, r := range []adapters.Ref{alice, unkeyed, e.KeyRef(echo, key, "alice")} {
		if !driver.Minted(r.ID, "alice") || driver.Minted(r.ID, "bob") {
			t.Errorf("%v: Minted for alice %v, for bob %v; want its suffix minted for alice alone (driver.NewSuffix, KeySuffix)",
				r, driver.Minted(r.ID, "alice"), driver.Minted(r.ID, "bob"))
		}
	}
	for caller, ref := range map[string]adapters.Ref{"alice": alice, "bob": bob} {
		kr := e.KeyRef(echo, key, caller)
		byKey, err := e.Describe(ctx, echo, kr, pace.Pace{})
		if err != nil {
			t.Fatalf("Describe(KeyRef(%s)): %v", caller, err)
		}
		byRef, _ := e.Describe(ctx, echo, ref, pace.Pace{})
		if !byKey.Started.Equal(byRef.Started) || kr.ID == e.KeyRef(echo, key, "").ID {
			t.Errorf("KeyRef for %s reads another execution than %s's own %v", caller, caller, ref)
		}
	}
}

// testList: a caller's listing holds its executions and no one else's, across pages of any size.
func testList(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, echo := h.Engine(), h.Target("echo")
	caller := "lister-" + unique(t)
	mine := map[adapters.Ref]bool{}
	// They run while they are listed: an execution that ends between two pages may move in the
	// listing's order (Temporal's visibility store sorts closed executions by their close time),
	// and be listed twice.
	for range 3 {
		r := start(ctx, t, h, echo, adapters.StartRequest{Input: echoInput(t, 60, unique(t)), Caller: caller})
		cancelAtCleanup(t, h, echo, r)
		mine[r] = true
	}
	other := start(ctx, t, h, echo, adapters.StartRequest{Input: echoInput(t, 60, unique(t)), Caller: caller + "-other"})
	cancelAtCleanup(t, h, echo, other)
	// Listings may lag behind starts (Temporal's visibility store is eventually consistent).
	var listed map[adapters.Ref]bool
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		listed = listAll(ctx, t, unpaced{e}, echo, caller)
		if len(listed) >= len(mine) || time.Now().After(deadline) {
			break
		}
	}
	for r := range listed {
		if !mine[r] {
			t.Errorf("listed %v: not one of the caller's executions", r)
		}
	}
	if len(listed) != len(mine) || listed[other] {
		t.Errorf("listed %v, want exactly %v", listed, mine)
	}
}

// listAll follows a caller's listing in pages of 2 and checks each page's shape.
func listAll(ctx context.Context, t *testing.T, e adapters.Conn, tg adapters.Target, caller string) map[adapters.Ref]bool {
	t.Helper()
	listed := map[adapters.Ref]bool{}
	page := ""
	for pages := 0; ; pages++ {
		if pages == 100 {
			t.Fatalf("100 pages of 2, still not the end")
		}
		got, next, err := e.List(ctx, adapters.ListOptions{Target: tg, Caller: caller, Page: page, Limit: 2})
		if err != nil {
			t.Fatalf("List page %q: %v", page, err)
		}
		if len(got) > 2 {
			t.Fatalf("List with limit 2 gave %d", len(got))
		}
		for _, l := range got {
			if listed[l.Ref] {
				t.Errorf("%v listed twice", l.Ref)
			}
			if l.Status.State == 0 || l.Status.Started.IsZero() {
				t.Errorf("%v listed without a status: %+v", l.Ref, l.Status)
			}
			if !e.Owns(tg, l.Ref, caller) {
				t.Errorf("%v listed for %q, who does not own it (Owns)", l.Ref, caller)
			}
			listed[l.Ref] = true
		}
		if page = next; page == "" {
			return listed
		}
	}
}

// testSweep: an engine that sweeps shows, of the refs it is given, each running execution as
// running and an ended one as ended or not at all, once its listing has caught up, across its
// pages (more refs than one page by id holds); never an execution it was not given; and it
// refuses a page it did not give.
func testSweep(t *testing.T, h *suite) {
	sw := h.Engine()
	if !sw.Supports(adapters.OpSweep) {
		t.Skip("the engine reads its executions one at a time: its Conn is no driver.Sweeper")
	}
	ctx := testContext(t)
	tg := h.Target("echo")
	begin := echoes(ctx, t, h, "sweep-"+unique(t), "swept")
	var refs []adapters.Ref
	for range 3 {
		refs = append(refs, begin(60))
	}
	ended, unasked := begin(0), begin(60)
	awaitTerminal(ctx, t, unpaced{h.Engine()}, tg, ended)
	refs = append(refs, ended)
	for len(refs) < driver.SweepIDs+50 { // the last real ones on the second page by id
		refs = append([]adapters.Ref{h.Missing()}, refs...)
	}
	real := refs[len(refs)-4:]

	var seen map[adapters.Ref]adapters.Status
	caughtUp := func() bool {
		for _, r := range real[:3] {
			if st, ok := seen[r]; !ok || st.State.Terminal() {
				return false
			}
		}
		st, ok := seen[ended]
		return !ok || st.State == adapters.Succeeded
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		seen = sweepAll(ctx, t, sw, []adapters.Target{tg}, refs)
		if _, ok := seen[unasked]; ok || len(seen) > len(real) {
			t.Fatalf("the sweep of %v showed %v, which holds executions it was not given", real, seen)
		}
		if caughtUp() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s the sweep shows %v; want the first three of %v running and the last ended or not shown", seen, real)
		}
	}
	// The same executions alone, few enough to be looked up by id (EndSweeper), show the same.
	few := sweepAll(ctx, t, sw, []adapters.Target{tg}, real)
	for _, r := range real[:3] {
		if st, ok := few[r]; !ok || st.State.Terminal() {
			t.Errorf("a sweep of %d refs shows %v running, one of them alone %v (%v): want the same", len(refs), r, st, ok)
		}
	}
	if _, _, err := sw.Sweep(ctx, adapters.SweepOptions{Targets: []adapters.Target{tg}, Refs: refs, Page: "not-a-page"}); !errors.Is(err, adapters.ErrInvalid) {
		t.Fatalf("a sweep from a page it never gave: %v, want ErrInvalid", err)
	}
}

// testSweepGroup: targets of one SweepGroup are swept in one call, which shows the running
// executions of each; targets of different groups cannot be.
func testSweepGroup(t *testing.T, h *suite) {
	sw := h.Engine()
	if !sw.Supports(adapters.OpSweep) {
		t.Skip("the engine reads its executions one at a time: its Conn is no driver.Sweeper")
	}
	ctx := testContext(t)
	echo, fail := h.Target("echo"), h.Target("fail")
	both := []adapters.Target{echo, fail}
	caller := "group-" + unique(t)
	refs := []adapters.Ref{
		echoes(ctx, t, h, caller, "grouped")(60),
		start(ctx, t, h, fail, adapters.StartRequest{Input: mustJSON(t, map[string]any{"seconds": 60, "reason": "grouped"}), Caller: caller}),
	}
	cancelAtCleanup(t, h, fail, refs[1])
	if sw.SweepGroup(echo) != sw.SweepGroup(fail) {
		if _, _, err := sw.Sweep(ctx, adapters.SweepOptions{Targets: both, Refs: refs}); !errors.Is(err, adapters.ErrInvalid) {
			t.Fatalf("a sweep of targets of groups %q and %q: %v, want ErrInvalid", sw.SweepGroup(echo), sw.SweepGroup(fail), err)
		}
		return
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		seen := sweepAll(ctx, t, sw, both, refs)
		if len(seen) == 2 && !seen[refs[0]].State.Terminal() && !seen[refs[1]].State.Terminal() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s one sweep of echo and fail shows %v; want both of %v running", seen, refs)
		}
	}
}

// testSweepEnded: an engine that lists ends shows, of the refs it is given, those that ended after
// the time asked, as ended, once its listing has caught up; never a running one, one that ended
// before, or one it was not given; and it refuses a page it did not give.
func testSweepEnded(t *testing.T, h *suite) {
	if _, ok := h.Engine().Conn().(driver.EndSweeper); !ok {
		t.Skip("the engine does not list ends: its Conn is no driver.EndSweeper")
	}
	e := h.Engine()
	ctx := testContext(t)
	tg := h.Target("echo")
	begin := echoes(ctx, t, h, "ends-"+unique(t), "ended")
	before := begin(0)
	awaitTerminal(ctx, t, unpaced{e}, tg, before)
	time.Sleep(50 * time.Millisecond)
	since := time.Now()
	running, ended, unasked := begin(60), begin(0), begin(0)
	awaitTerminal(ctx, t, unpaced{e}, tg, ended)
	awaitTerminal(ctx, t, unpaced{e}, tg, unasked)
	refs := []adapters.Ref{h.Missing(), before, running, ended}
	endsAfter := func(since time.Time) map[adapters.Ref]adapters.Status {
		return allPages(t, "SweepEnded", func(page string) ([]adapters.Listed, string, error) {
			return e.SweepEnded(ctx, adapters.SweepOptions{Targets: []adapters.Target{tg}, Refs: refs, Page: page, Since: since})
		})
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		seen := endsAfter(since)
		for r := range seen {
			if r != ended {
				t.Fatalf("the ends after %v of %v showed %v: want only %v, which ended after it", since, refs, seen, ended)
			}
		}
		if st, ok := seen[ended]; ok {
			if st.State != adapters.Succeeded {
				t.Fatalf("the ends showed %v as %+v, want succeeded", ended, st)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s the ends after %v show %v; want %v", since, seen, ended)
		}
	}
	if seen := endsAfter(time.Now().Add(time.Minute)); len(seen) > 0 {
		t.Errorf("the ends after a minute from now: %v, want none", seen)
	}
	if _, _, err := e.SweepEnded(ctx, adapters.SweepOptions{Targets: []adapters.Target{tg}, Refs: refs, Page: "not-a-page", Since: since}); !errors.Is(err, adapters.ErrInvalid) {
		t.Fatalf("a sweep of ends from a page it never gave: %v, want ErrInvalid", err)
	}
}

// echoes starts echo executions of text for caller, each waiting the seconds given, and each
// cancelled at the end of the test.
func echoes(ctx context.Context, t *testing.T, h *suite, caller, text string) func(seconds float64) adapters.Ref {
	tg := h.Target("echo")
	return func(seconds float64) adapters.Ref {
		r := start(ctx, t, h, tg, adapters.StartRequest{Input: echoInput(t, seconds, text), Caller: caller})
		cancelAtCleanup(t, h, tg, r)
		return r
	}
}

// sweepAll sweeps refs through all of their pages.
func sweepAll(ctx context.Context, t *testing.T, sw driver.Sweeper, tg []adapters.Target, refs []adapters.Ref) map[adapters.Ref]adapters.Status {
	t.Helper()
	return allPages(t, "Sweep", func(page string) ([]adapters.Listed, string, error) {
		return sw.Sweep(ctx, adapters.SweepOptions{Targets: tg, Refs: refs, Page: page})
	})
}

// allPages reads the pages of a sweep (what) with read, and gives what they showed, by ref.
func allPages(t *testing.T, what string, read func(page string) ([]adapters.Listed, string, error)) map[adapters.Ref]adapters.Status {
	t.Helper()
	seen := map[adapters.Ref]adapters.Status{}
	page := ""
	for range 100 {
		listed, next, err := read(page)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for _, l := range listed {
			seen[l.Ref] = l.Status
		}
		if page = next; page == "" {
			return seen
		}
	}
	t.Fatalf("%s did not end after 100 pages", what)
	return nil
}

func testUnavailable(t *testing.T, h *suite) {
	conn := h.Unreachable()
	t.Cleanup(func() { conn.Close() })
	stack := Stack(conn, h.Driver().Info())
	unavailable(t, "its Conn", conn, h.Target("echo"), h.Missing())
	unavailable(t, "the Engine", unpaced{stack}, h.Target("echo"), h.Missing())
	if stack.Supports(adapters.OpSweep) {
		if _, _, err := stack.Sweep(testContext(t), adapters.SweepOptions{Targets: []adapters.Target{h.Target("echo")}, Refs: []adapters.Ref{h.Missing()}}); !errors.Is(err, adapters.ErrUnavailable) {
			t.Errorf("Sweep on an engine whose server does not answer: error %v, want ErrUnavailable", err)
		}
	}
}

// unavailable checks that every call of u (what, an engine whose server does not answer) that
// needs the server fails with ErrUnavailable.
func unavailable(t *testing.T, what string, u adapters.Conn, echo adapters.Target, r adapters.Ref) {
	ctx := testContext(t)
	calls := map[string]func() error{
		"Check": func() error { _, err := u.Check(ctx, echo); return err },
		"Start": func() error {
			_, err := u.Start(ctx, echo, adapters.StartRequest{Input: echoInput(t, 0, unique(t))})
			return err
		},
		"Describe": func() error { _, err := u.Describe(ctx, echo, r); return err },
		"Outcome":  func() error { _, err := u.Outcome(ctx, echo, r); return err },
		"Cancel":   func() error { return u.Cancel(ctx, echo, r, "unavailable") },
		"Answer": func() error {
			return u.Answer(ctx, echo, r, "confirm", adapters.Answer{Action: adapters.ActionDecline})
		},
		"List": func() error { _, _, err := u.List(ctx, adapters.ListOptions{Target: echo, Limit: 10}); return err },
	}
	var wg sync.WaitGroup
	for name, call := range calls {
		wg.Go(func() {
			if err := call(); !errors.Is(err, adapters.ErrUnavailable) {
				t.Errorf("%s of %s, on an engine whose server does not answer: error %v, want ErrUnavailable", name, what, err)
			}
		})
	}
	wg.Wait()
}

// confirm is an accepted answer to a question of ConfirmSchema.
func confirm(yes bool) adapters.Answer {
	return adapters.Answer{Action: adapters.ActionAccept, Content: json.RawMessage(fmt.Sprintf(`{"confirm":%t}`, yes))}
}

// startAsk starts the target "ask" with a message of its own, and waits until it asks.
func startAsk(ctx context.Context, t *testing.T, h *suite) (adapters.Target, adapters.Ref, adapters.Status, string) {
	t.Helper()
	ask, message := h.Target("ask"), "May I? "+unique(t)
	r := start(ctx, t, h, ask, adapters.StartRequest{Input: mustJSON(t, map[string]any{"message": message})})
	cancelAtCleanup(t, h, ask, r)
	st := AwaitStatus(ctx, t, unpaced{h.Engine()}, ask, r, "input_required", func(st adapters.Status) bool { return st.State == adapters.InputRequired })
	return ask, r, st, message
}

// testAskAccept: a question is read with its key, message and schema; an accepted answer moves the
// execution on to its end, with the answer in its output; a second answer finds nothing open.
func testAskAccept(t *testing.T, h *suite) {
	ctx := testContext(t)
	e := h.Engine()
	ask, r, st, message := startAsk(ctx, t, h)
	if st.State.Terminal() || len(st.Inputs) != 1 || st.Inputs[0].Key != "confirm" || st.Inputs[0].Message != message || !sameJSON(st.Inputs[0].Schema, ConfirmSchema) {
		t.Fatalf("Describe of an execution that asks: %+v, want input_required with one question, key confirm, message %q and ConfirmSchema", st, message)
	}
	if st.Native == "" || st.Message == "" || st.Started.IsZero() {
		t.Errorf("Describe of an execution that asks: %+v, want a native state, a message and a start", st)
	}
	if err := e.Answer(ctx, ask, r, "confirm", confirm(true)); err != nil {
		t.Fatalf("Answer: %v", err)
	}
	out, err := e.Wait(ctx, ask, r, pace.Pace{})
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if out.State != adapters.Succeeded || !sameJSON(out.Output, json.RawMessage(`{"confirm":true}`)) {
		t.Errorf("Wait after the answer: %+v, want succeeded with output {\"confirm\":true}", out)
	}
	if err := e.Answer(ctx, ask, r, "confirm", confirm(false)); !errors.Is(err, adapters.ErrNotFound) {
		t.Errorf("a second answer to the same question: %v, want ErrNotFound", err)
	}
}

// testAskDecline: declined and dismissed questions end the execution as the program decides.
func testAskDecline(t *testing.T, h *suite) {
	ctx := testContext(t)
	for _, c := range []struct{ action, error, cause string }{
		{adapters.ActionDecline, adapters.DeclinedError, `the question "confirm" was declined`},
		{adapters.ActionCancel, adapters.DismissedError, `the question "confirm" was dismissed`},
	} {
		ask, r, _, _ := startAsk(ctx, t, h)
		if err := h.Engine().Answer(ctx, ask, r, "confirm", adapters.Answer{Action: c.action}); err != nil {
			t.Fatalf("Answer %s: %v", c.action, err)
		}
		out, err := h.Engine().Wait(ctx, ask, r, pace.Pace{})
		if err != nil {
			t.Fatalf("Wait: %v", err)
		}
		if out.State != adapters.Failed || out.Error != c.error || out.Cause != c.cause {
			t.Errorf("after %s: %+v, want failed with error %q and cause %q", c.action, out, c.error, c.cause)
		}
	}
}

// testAskTwo: two questions open at once, answered one by one; an answered one is no longer
// open, the other still is.
func testAskTwo(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, two := h.Engine(), h.Target("ask-two")
	r := start(ctx, t, h, two, adapters.StartRequest{Input: json.RawMessage(`{}`)})
	cancelAtCleanup(t, h, two, r)
	st := AwaitStatus(ctx, t, unpaced{e}, two, r, "two questions", func(st adapters.Status) bool { return len(st.Inputs) == 2 })
	if st.State != adapters.InputRequired || keys(st) != "first,second" || !sameJSON(st.Inputs[0].Schema, ConfirmSchema) || !sameJSON(st.Inputs[1].Schema, ConfirmSchema) {
		t.Fatalf("Describe: %+v, want input_required with the questions first and second", st)
	}
	if err := e.Answer(ctx, two, r, "first", confirm(true)); err != nil {
		t.Fatalf("Answer first: %v", err)
	}
	st = AwaitStatus(ctx, t, unpaced{e}, two, r, "only the second question", func(st adapters.Status) bool { return keys(st) != "first,second" })
	if st.State != adapters.InputRequired || keys(st) != "second" {
		t.Fatalf("Describe after the first answer: %+v, want input_required with only the question second", st)
	}
	if err := e.Answer(ctx, two, r, "first", confirm(false)); !errors.Is(err, adapters.ErrNotFound) {
		t.Errorf("a second answer to first: %v, want ErrNotFound", err)
	}
	if err := e.Answer(ctx, two, r, "second", confirm(false)); err != nil {
		t.Fatalf("Answer second: %v", err)
	}
	out, err := e.Wait(ctx, two, r, pace.Pace{})
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if want := json.RawMessage(`{"first":{"confirm":true},"second":{"confirm":false}}`); out.State != adapters.Succeeded || !sameJSON(out.Output, want) {
		t.Errorf("Wait: %+v, want succeeded with %s", out, want)
	}
}

// keys lists the keys of a status's questions, sorted, joined by commas.
func keys(st adapters.Status) string {
	var k []string
	for _, q := range st.Inputs {
		k = append(k, q.Key)
	}
	slices.Sort(k)
	return strings.Join(k, ",")
}

// testAnswerNotOpen: answers to questions nobody asks, or with an unknown action.
func testAnswerNotOpen(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, echo := h.Engine(), h.Target("echo")
	if err := e.Answer(ctx, echo, h.Missing(), "confirm", confirm(true)); !errors.Is(err, adapters.ErrNotFound) {
		t.Errorf("Answer to an execution that does not exist: %v, want ErrNotFound", err)
	}
	running := start(ctx, t, h, echo, adapters.StartRequest{Input: echoInput(t, 60, unique(t))})
	cancelAtCleanup(t, h, echo, running)
	if err := e.Answer(ctx, echo, running, "confirm", confirm(true)); !errors.Is(err, adapters.ErrNotFound) {
		t.Errorf("Answer to an execution that asks nothing: %v, want ErrNotFound", err)
	}
	ask, r, _, _ := startAsk(ctx, t, h)
	if err := e.Answer(ctx, ask, r, "nope", confirm(true)); !errors.Is(err, adapters.ErrNotFound) {
		t.Errorf("Answer to a key that is not asked: %v, want ErrNotFound", err)
	}
	if err := e.Answer(ctx, ask, r, "confirm", adapters.Answer{Action: "maybe"}); !errors.Is(err, adapters.ErrInvalid) {
		t.Errorf("Answer with the action maybe: %v, want ErrInvalid", err)
	}
	if err := e.Answer(ctx, ask, r, "confirm", adapters.Answer{Action: adapters.ActionDecline}); err != nil {
		t.Fatalf("Answer decline: %v", err)
	}
	awaitTerminal(ctx, t, unpaced{e}, ask, r)
	if err := e.Answer(ctx, ask, r, "confirm", confirm(true)); !errors.Is(err, adapters.ErrNotFound) {
		t.Errorf("Answer to an ended execution: %v, want ErrNotFound", err)
	}
}

// testCancelAsking: an execution that waits on a question can be cancelled; it then asks nothing.
func testCancelAsking(t *testing.T, h *suite) {
	ctx := testContext(t)
	e := h.Engine()
	ask, r, _, _ := startAsk(ctx, t, h)
	if err := e.Cancel(ctx, ask, r, "no answer after all"); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	st := awaitTerminal(ctx, t, unpaced{e}, ask, r)
	if st.State != adapters.Cancelled || len(st.Inputs) > 0 {
		t.Errorf("Describe after Cancel: %+v, want cancelled with no question", st)
	}
	if err := e.Answer(ctx, ask, r, "confirm", confirm(true)); !errors.Is(err, adapters.ErrNotFound) {
		t.Errorf("Answer to a cancelled execution: %v, want ErrNotFound", err)
	}
}

// testProgress: a multi-step execution says what it is doing while it runs.
func testProgress(t *testing.T, h *suite) {
	ctx := testContext(t)
	e, steps := h.Engine(), h.Target("steps")
	r := start(ctx, t, h, steps, adapters.StartRequest{Input: mustJSON(t, map[string]any{"version": unique(t), "stepSeconds": 1})})
	cancelAtCleanup(t, h, steps, r)
	said := map[string]bool{}
	st := AwaitStatus(ctx, t, unpaced{e}, steps, r, "the end", func(st adapters.Status) bool {
		if st.State == adapters.Working && st.Message != "" {
			said[st.Message] = true
		}
		return st.State.Terminal()
	})
	if st.State != adapters.Succeeded {
		t.Errorf("the execution ended %+v, want succeeded", st)
	}
	if len(said) < 2 {
		t.Errorf("a multi-step execution said %q while it was working, want a message for each of several steps", slices.Sorted(maps.Keys(said)))
	}
}

// AwaitStatus polls Describe until ok accepts the status (what names it), or fails the test after
// a minute. Adapters' own tests use it too.
func AwaitStatus(ctx context.Context, t *testing.T, e adapters.Conn, tg adapters.Target, r adapters.Ref, what string, ok func(adapters.Status) bool) adapters.Status {
	t.Helper()
	return awaitWithin(ctx, t, e, tg, r, what, time.Minute, ok)
}

func awaitWithin(ctx context.Context, t *testing.T, e adapters.Conn, tg adapters.Target, r adapters.Ref, what string, within time.Duration, ok func(adapters.Status) bool) adapters.Status {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		st, err := e.Describe(ctx, tg, r)
		if err != nil {
			t.Fatalf("Describe %v: %v", r, err)
		}
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v still %+v after %v", what, r, st, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Messages polls Describe every interval until the execution ends, and returns the status
// messages it read while the execution was Working, each change once, in order. An empty message
// is not one: a Working execution may have none yet (a Temporal run whose first workflow task a
// worker has started but not completed has no progress and no activity to tell of).
func Messages(ctx context.Context, t *testing.T, e adapters.Conn, tg adapters.Target, r adapters.Ref, interval time.Duration) []string {
	t.Helper()
	var seen []string
	for {
		st, err := e.Describe(ctx, tg, r)
		if err != nil {
			t.Fatalf("Describe %v: %v", r, err)
		}
		if st.State.Terminal() {
			return seen
		}
		if st.State == adapters.Working && st.Message != "" && (len(seen) == 0 || seen[len(seen)-1] != st.Message) {
			seen = append(seen, st.Message)
		}
		time.Sleep(interval)
	}
}

func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	return json.Unmarshal(a, &va) == nil && json.Unmarshal(b, &vb) == nil && reflect.DeepEqual(va, vb)
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), subtestTimeout)
	t.Cleanup(cancel)
	return ctx
}

// start starts one execution and fails the test if it cannot, or if Owns rejects the Ref.
func start(ctx context.Context, t *testing.T, h *suite, tg adapters.Target, req adapters.StartRequest) adapters.Ref {
	t.Helper()
	r, err := h.Engine().Start(ctx, tg, req, pace.Pace{})
	if err != nil {
		t.Fatalf("Start %s: %v", tg.Name, err)
	}
	if !h.Engine().Owns(tg, r, req.Caller) {
		t.Fatalf("Owns(%s, %v) = false for the Ref Start returned", tg.Name, r)
	}
	return r
}

// cancelAtCleanup stops an execution the test leaves running, so that it does not outlive the test.
func cancelAtCleanup(t *testing.T, h *suite, tg adapters.Target, r adapters.Ref) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = h.Engine().Cancel(ctx, tg, r, "conformance test cleanup")
	})
}

// awaitTerminal polls Describe until the execution ends, or fails the test after settle.
func awaitTerminal(ctx context.Context, t *testing.T, e adapters.Conn, tg adapters.Target, r adapters.Ref) adapters.Status {
	t.Helper()
	return awaitWithin(ctx, t, e, tg, r, "the end", settle, func(st adapters.Status) bool { return st.State.Terminal() })
}

func checkSucceeded(t *testing.T, what string, out adapters.Outcome, text string) {
	t.Helper()
	if out.State != adapters.Succeeded || out.Native == "" || out.Error != "" || out.Cause != "" {
		t.Errorf("%s: outcome %+v, want succeeded with a native state and no error", what, out)
	}
	var got any
	if err := json.Unmarshal(out.Output, &got); err != nil {
		t.Errorf("%s: output %q is not JSON: %v", what, out.Output, err)
		return
	}
	if want := map[string]any{"text": text}; !reflect.DeepEqual(got, want) {
		t.Errorf("%s: output %s, want {\"text\":%q}", what, out.Output, text)
	}
}

// withoutOutput drops Output, which a failed execution may or may not carry, and Status, which
// sameEndedStatus compares with Describe's.
func withoutOutput(o adapters.Outcome) adapters.Outcome {
	o.Output, o.Status = nil, adapters.Status{}
	return o
}

// sameEndedStatus checks that the outcome o of r carries the Status the driver's Describe reads.
func sameEndedStatus(t *testing.T, h *suite, tg adapters.Target, r adapters.Ref, o adapters.Outcome) {
	t.Helper()
	st, err := h.Engine().Conn().Describe(testContext(t), tg, r)
	if err != nil {
		t.Fatalf("Describe of an ended execution: %v", err)
	}
	if !reflect.DeepEqual(o.Status, st) {
		t.Errorf("the outcome's Status %+v, Describe %+v: want the same", o.Status, st)
	}
}

func echoInput(t *testing.T, seconds float64, text string) json.RawMessage {
	t.Helper()
	return mustJSON(t, map[string]any{"seconds": seconds, "text": text})
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// unique returns a string no other test run uses, readable in the engine's own tools.
func unique(t *testing.T) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return strings.ReplaceAll(t.Name(), "/", ".") + "-" + hex.EncodeToString(b[:])
}
